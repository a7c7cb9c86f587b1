import fc from 'fast-check';

/**
 * Values a generated case holds symbolically until it is sent: a fixture of the current scene
 * (ids differ from one scene to the next; the case prints the same) and long strings (a case
 * prints "a"×70000, not the string). `materialize` turns a case into plain data.
 */
export interface ResolveContext {
  /** The value of fixture `kind` number `index` for the caller sending this case. */
  fixture(kind: string, index: number): string;
}

export abstract class Deferred {
  abstract resolve(ctx: ResolveContext): unknown;
  abstract [fc.toStringMethod](): string;
  toJSON(): string {
    return this[fc.toStringMethod]();
  }
}

/** Fixture number `index` of a kind (server, channel, message, user, username...): see world.ts. */
export class Fx extends Deferred {
  constructor(
    readonly kind: string,
    readonly index: number,
  ) {
    super();
  }
  resolve(ctx: ResolveContext): string {
    return ctx.fixture(this.kind, this.index);
  }
  [fc.toStringMethod](): string {
    return `<${this.kind}#${this.index}>`;
  }
}

/** `unit` repeated `count` times. */
export class Long extends Deferred {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {
    super();
  }
  resolve(): string {
    return this.unit.repeat(this.count);
  }
  [fc.toStringMethod](): string {
    return `${JSON.stringify(this.unit)}×${this.count}`;
  }
}

/** A string built from pieces, some deferred (a mention of a fixture user inside a text). */
export class Concat extends Deferred {
  constructor(readonly pieces: (string | Deferred)[]) {
    super();
  }
  resolve(ctx: ResolveContext): string {
    return this.pieces.map((p) => (typeof p === 'string' ? p : String(p.resolve(ctx)))).join('');
  }
  [fc.toStringMethod](): string {
    return this.pieces.map((p) => (typeof p === 'string' ? p : p[fc.toStringMethod]())).join('+');
  }
}

/** Deeply replaces every Deferred by its value. */
export function materialize<T = unknown>(value: unknown, ctx: ResolveContext): T {
  if (value instanceof Deferred) return value.resolve(ctx) as T;
  if (Array.isArray(value)) return value.map((v) => materialize(v, ctx)) as T;
  if (value instanceof Uint8Array) return value as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = materialize(v, ctx);
    return out as T;
  }
  return value as T;
}

/** Resolves fixtures to fixed stand-ins (self-tests, printing). */
export const placeholderContext: ResolveContext = {
  fixture: (kind, index) => (kind === 'username' ? `user_${index}` : `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`),
};
