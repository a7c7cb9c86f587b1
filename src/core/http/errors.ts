/** The one error type: thrown anywhere, turned into a plain-text response in respond.ts. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /**
     * A stable name for the error where a browser form can end in it: the form is redirected to
     * `/?error=<code>` and the page shows its own sentence for the code, never text from the URL.
     */
    readonly code?: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code?: string) => new HttpError(400, message, {}, code);
export const forbidden = (message: string, code?: string) => new HttpError(403, message, {}, code);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string, code?: string) => new HttpError(409, message, {}, code);
