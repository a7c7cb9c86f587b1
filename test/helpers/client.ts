import { checkAgainstContract } from './contract';

/**
 * A small HTTP client with a cookie jar of one session (and a remembered device's secret, sent
 * only to /api/session as a browser would), for black-box tests.
 */
export interface Res<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export class Client {
  cookie: string | undefined;
  /** `app_device=...`: the remembered device's secret, when it has one. */
  device: string | undefined;
  /** `app_oidc=...`: what binds a sign-in through a provider to this browser, sent only to /api/auth/oidc. */
  oidc: string | undefined;
  userId = '';
  username = '';

  constructor(readonly base: string) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> {
    const init: RequestInit = { method, headers: { ...headers }, redirect: 'manual' };
    const h = init.headers as Record<string, string>;
    const cookies = [this.cookie, path.startsWith('/api/session') ? this.device : undefined, path.startsWith('/api/auth/oidc') ? this.oidc : undefined].filter(
      Boolean,
    );
    if (cookies.length > 0) h.cookie = cookies.join('; ');
    if (body !== undefined) {
      if (typeof body === 'string' || body instanceof FormData || body instanceof URLSearchParams) {
        init.body = body as RequestInit['body'];
      } else {
        init.body = JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
    }
    const res = await fetch(this.base + path, init);
    for (const setCookie of res.headers.getSetCookie()) {
      const [, name, value] = /^(app_session|app_device|app_oidc)=([^;]*)/.exec(setCookie) ?? [];
      if (name === 'app_session') this.cookie = value ? `app_session=${value}` : undefined;
      if (name === 'app_device') this.device = value ? `app_device=${value}` : undefined;
      if (name === 'app_oidc') this.oidc = value ? `app_oidc=${value}` : undefined;
    }
    const text = await res.text();
    // Every answer is held against docs/openapi.json: a mismatch fails the test.
    checkAgainstContract(method, path, res.status, res.headers.get('content-type'), text);
    let parsed: unknown = undefined;
    if (res.headers.get('content-type')?.startsWith('application/json')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, body, headers);
  }
  delete<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, body, headers);
  }
}

let counter = 0;
/** A unique valid username for this test process. */
export const uniqueName = (prefix = 'user') => `${prefix}${process.pid % 10000}_${++counter}`;

/** Registers and logs in a fresh user; the client holds its session. */
export async function signUp(base: string, name = uniqueName(), password = 'correct horse'): Promise<Client> {
  const client = new Client(base);
  const reg = await client.post('/api/register', { username: name, password });
  if (reg.status !== 201) throw new Error(`register ${name} failed: ${reg.status} ${reg.text}`);
  const login = await client.post('/api/login', { username: name, password });
  if (login.status !== 200) throw new Error(`login ${name} failed: ${login.status} ${login.text}`);
  client.userId = login.body.user_id;
  client.username = name;
  return client;
}
