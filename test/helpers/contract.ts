import fs from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { compile, match } from '../../src/core/http/router';

/**
 * Every answer the integration tests receive is held against docs/openapi.json: the status must
 * be one the operation documents, and a JSON body must match the schema documented for that
 * status (a plain-text error must be plain text). Wired into the test clients once
 * (helpers/client.ts, helpers/multipart.ts); a mismatch throws, which fails the test.
 */
interface Operation {
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown }> }>;
}

const document = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, { content: Record<string, { schema?: unknown }> }> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');

const table = compile(
  Object.entries(document.paths).flatMap(([route, ops]) =>
    Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path: route.replace(/\{([a-z_]+)\}/g, ':$1'), route })),
  ),
);

const validators = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    // Rewrite local refs so they resolve inside the registered document.
    const rebased = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/'));
    validate = ajv.compile(rebased);
    validators.set(key, validate);
  }
  return validate;
}

/** Throws with a readable reason when an answer contradicts the document; silent otherwise. */
export function checkAgainstContract(method: string, url: string, status: number, contentType: string | null, text: string): void {
  const pathname = new URL(url, 'http://x').pathname;
  const verb = method === 'HEAD' ? 'GET' : method;
  let found: ReturnType<typeof match<{ route: string }>>;
  try {
    found = match(table, verb, pathname);
  } catch {
    return; // a malformed path id: the router's own 400, before any operation
  }
  // Paths and methods outside the document (static files, 404, 405) are not the API's.
  if (found === null || 'allow' in found) return;
  const { route } = found.route;
  const operation = document.paths[route][verb.toLowerCase()];
  const where = `${method} ${route} answered ${status}`;
  const response = operation.responses[String(status)];
  if (!response) throw new Error(`contract: ${where}, a status docs/openapi.json does not list for it (${text.slice(0, 200).trim()})`);
  const content = response.$ref ? document.components.responses[response.$ref.split('/').pop()!].content : response.content;
  if (!content || method === 'HEAD' || status === 204 || status === 304) return;
  const mediaType = (contentType ?? '').split(';')[0].trim();
  // JSON, and the JSON of a type of its own (application/manifest+json).
  if (content[mediaType] && (mediaType === 'application/json' || mediaType.endsWith('+json'))) {
    const validate = validatorFor(`${verb} ${route} ${status}`, content[mediaType].schema);
    if (!validate(JSON.parse(text))) {
      throw new Error(`contract: ${where} with a body that does not match its schema: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
    }
    return;
  }
  if (content['text/plain'] && mediaType !== 'text/plain') throw new Error(`contract: ${where} with ${mediaType || 'no type'}, not plain text`);
  if (!content[mediaType] && !content['*/*']) throw new Error(`contract: ${where} with ${mediaType}, which it does not document`);
}
