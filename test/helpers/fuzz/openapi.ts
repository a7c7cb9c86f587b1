import fs from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * docs/openapi.json as the fuzzer reads it: every operation with its parameters and request
 * body, and one Ajv 2020 instance (with ajv-formats) that decides whether an input is valid.
 */
export type JsonSchema = Record<string, any> | boolean;

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  description?: string;
  schema: JsonSchema;
  /** OpenAPI serialization: form (the query default) and whether an array repeats the parameter. */
  style?: string;
  explode?: boolean;
}

export interface MediaType {
  schema: JsonSchema;
  encoding?: Record<string, { contentType?: string }>;
}

export interface Operation {
  /** "POST /api/servers/{server_id}/channels" */
  key: string;
  method: string;
  /** The path template of the document. */
  route: string;
  operationId: string;
  summary: string;
  description: string;
  /** Public: the document gives it `security: []`. */
  public: boolean;
  /** The x-auth extension: none, account, user, admin. */
  auth: string;
  pathParams: Param[];
  queryParams: Param[];
  body?: { required: boolean; content: Record<string, MediaType> };
  /** A WebSocket upgrade (documents 101). */
  upgrade: boolean;
  responses: string[];
}

const DOC_PATH = path.join(__dirname, '..', '..', '..', 'docs', 'openapi.json');
export const doc = JSON.parse(fs.readFileSync(DOC_PATH, 'utf8')) as {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, JsonSchema>; parameters?: Record<string, any>; requestBodies?: Record<string, any> };
  security?: unknown[];
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** A local `$ref` ("#/components/...") resolved inside the document. */
export function resolvePointer(ref: string): any {
  if (!ref.startsWith('#/')) throw new Error(`only local $ref is supported: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, part) => {
      if (node === undefined || !(part in node)) throw new Error(`unresolvable $ref ${ref}`);
      return node[part];
    }, doc);
}

const deref = <T>(node: T): T => {
  let current: any = node;
  for (let i = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && i < 20; i++) current = resolvePointer(current.$ref);
  return current;
};

function readParams(list: unknown[] | undefined): Param[] {
  return (list ?? []).map((raw) => {
    const p = deref(raw as any);
    return {
      name: p.name,
      in: p.in,
      required: p.in === 'path' ? true : Boolean(p.required),
      description: p.description,
      schema: p.schema ?? {},
      style: p.style,
      explode: p.explode,
    };
  });
}

export const operations: Operation[] = Object.entries(doc.paths).flatMap(([route, item]) => {
  const shared = readParams(item.parameters);
  return METHODS.filter((m) => item[m]).map((method) => {
    const op = item[method];
    const own = readParams(op.parameters);
    const params = [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
    const body = op.requestBody ? deref(op.requestBody) : undefined;
    const security = op.security ?? doc.security ?? [];
    return {
      key: `${method.toUpperCase()} ${route}`,
      method: method.toUpperCase(),
      route,
      operationId: op.operationId ?? '',
      summary: op.summary ?? '',
      description: op.description ?? '',
      public: Array.isArray(security) && (security.length === 0 || security.some((s: object) => Object.keys(s).length === 0)),
      auth: op['x-auth'] ?? '',
      pathParams: params.filter((p) => p.in === 'path'),
      queryParams: params.filter((p) => p.in === 'query'),
      body: body ? { required: Boolean(body.required), content: body.content ?? {} } : undefined,
      upgrade: Object.keys(op.responses ?? {}).includes('101'),
      responses: Object.keys(op.responses ?? {}),
    };
  });
});

export const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ $id: 'fuzzdoc', components: doc.components }, 'fuzzdoc');

/** A query array parameter repeats itself (style form, explode true: the OpenAPI default) or is comma-separated. */
export const explodes = (p: Param) => p.explode ?? (p.style ?? 'form') === 'form';

export const isArraySchema = (schema: JsonSchema) =>
  typeof schema === 'object' && (schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array')));

const compiled = new Map<string, ValidateFunction>();

/** A validator for a schema of the document (its local refs resolve in the document). */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) {
    const rebased = typeof schema === 'boolean' ? schema : JSON.parse(text.replace(/"#\/components\//g, '"fuzzdoc#/components/'));
    validate = ajv.compile(rebased as any);
    compiled.set(text, validate);
  }
  return validate;
}

/** null when valid; otherwise Ajv's reasons, each "path keyword message". */
export function schemaErrors(schema: JsonSchema, value: unknown, where: string): string[] | null {
  const validate = validatorFor(schema);
  if (validate(value)) return null;
  return (validate.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message ?? e.keyword}`.trim());
}
