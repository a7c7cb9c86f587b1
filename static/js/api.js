// Every call to the server goes through api(): JSON in and out, and the server's plain-text
// reason turned into an ApiError whose message can be shown to the user as it is.

export class ApiError extends Error {
  constructor(status, message, retryAfter = null) {
    super(message);
    this.status = status;
    /** For a 429: how many seconds the server asked us to wait (its Retry-After), else null. */
    this.retryAfter = retryAfter;
  }
}

/**
 * api('GET', '/api/servers'), api('POST', path, {name}), api('POST', path, formData).
 * Resolves to the parsed JSON body, or null for 204. Rejects with ApiError.
 */
export function api(method, path, body) {
  return request(method, path, body, {});
}

/**
 * A moderation call with its optional reason, which the server stores in the audit log. The
 * header carries ASCII only, so the reason is percent-encoded (the server decodes it); line
 * breaks, which the server refuses there, become spaces.
 */
export function apiWithReason(method, path, body, reason) {
  const text = (reason || '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return request(method, path, body, text ? { 'X-Audit-Log-Reason': encodeURIComponent(text) } : {});
}

async function request(method, path, body, headers) {
  const init = { method, credentials: 'same-origin', headers: { ...headers } };
  if (body instanceof FormData) {
    init.body = body; // the browser sets the multipart boundary itself
  } else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check the connection and try again.');
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).trim();
    const wait = Number(res.headers.get('Retry-After'));
    throw new ApiError(res.status, text || `The server answered ${res.status}.`, Number.isFinite(wait) && wait > 0 ? wait : null);
  }
  if (res.status === 204) return null;
  return res.json();
}

/** Builds a query string from the non-empty values: query({before: id, limit: 50}). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') q.set(key, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

/**
 * A multipart POST with upload progress (fetch cannot report it): {promise, abort}.
 * onProgress(sent, total) is called as bytes leave. Rejects with ApiError; abort() rejects
 * with status -1.
 */
export function upload(path, formData, onProgress) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open('POST', path);
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch {
          reject(new ApiError(xhr.status, 'The server sent an answer that could not be read.'));
        }
      } else {
        const wait = Number(xhr.getResponseHeader('Retry-After'));
        reject(new ApiError(xhr.status, (xhr.responseText || '').trim() || `The server answered ${xhr.status}.`, Number.isFinite(wait) && wait > 0 ? wait : null));
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'The upload was cut off. Check the connection and try again.')));
    xhr.addEventListener('abort', () => reject(new ApiError(-1, 'Upload cancelled.')));
    xhr.send(formData);
  });
  return { promise, abort: () => xhr.abort() };
}
