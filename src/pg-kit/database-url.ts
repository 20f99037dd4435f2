// PostgreSQL URL helpers shared by every room that keeps a database of its own (the gateway's
// store, the sandboxes, the vault): masking the password for messages, naming another database on
// the same server, and turning a refused connection into an error that says where we tried.

/** The URL with its password replaced by ***, safe for logs and error messages. */
export function maskDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable DATABASE_URL>';
  }
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (name === '') throw new Error(`DATABASE_URL ${maskDatabaseUrl(url)} names no database`);
  return name;
}

/** The same server and credentials, another database (e.g. `postgres` to create ours). */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

/** Whether two URLs name the same database on the same server (the default port spelled or not). */
export function sameDatabase(a: string, b: string): boolean {
  const ua = new URL(a);
  const ub = new URL(b);
  const port = (u: URL): string => (u.port === '' ? '5432' : u.port);
  return ua.hostname === ub.hostname && port(ua) === port(ub) && databaseName(a) === databaseName(b);
}

export class DatabaseUnreachableError extends Error {
  override readonly name = 'DatabaseUnreachableError';
  constructor(
    readonly maskedUrl: string,
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(
      `cannot reach PostgreSQL at ${maskedUrl} (${code}): start it with ` +
        `'pg_ctlcluster --skip-systemctl-redirect <version> main start' or set DATABASE_URL`,
      options,
    );
  }
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', '57P03']);

/** Wraps connection-level failures (server down, wrong host) so callers see the URL; passes others through. */
export function describeConnectError(url: string, err: unknown): unknown {
  const code = errorCode(err);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return new DatabaseUnreachableError(maskDatabaseUrl(url), code, { cause: err });
  return err;
}

export function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const direct = (err as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  // Node reports a refused dual-stack connect as an AggregateError whose members carry the code.
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner)) for (const e of inner) { const c = errorCode(e); if (c !== undefined) return c; }
  return undefined;
}
