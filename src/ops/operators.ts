// Named operators. Each operator has a token of their own, configured in the environment as
// SWITCHYARD_OPERATORS="alice:<token>,bob:<token>"; SWITCHYARD_ADMIN_TOKEN keeps working as the
// operator "admin". An operator's name is what their token maps to — never what a request or a
// command line says — so the audit trail (src/ops/audit.ts) names who really acted.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const OPERATORS_ENV = 'SWITCHYARD_OPERATORS';
export const ADMIN_TOKEN_ENV = 'SWITCHYARD_ADMIN_TOKEN';
/** The CLI's own credential: the token of the operator running the command. */
export const OPERATOR_TOKEN_ENV = 'SWITCHYARD_OPERATOR_TOKEN';
export const MIN_TOKEN_LENGTH = 24;
const NAME = /^[a-z][a-z0-9._-]{0,39}$/;

export interface Operator {
  readonly name: string;
  readonly token: string;
}

/** The configured operators (possibly none: the dashboard is then off and operator commands refuse). */
export class Operators {
  constructor(private readonly list: readonly Operator[]) {}

  get size(): number {
    return this.list.length;
  }

  names(): string[] {
    return this.list.map((o) => o.name);
  }

  /** The operator a token belongs to, compared in constant time against every configured token. */
  byToken(given: unknown): Operator | null {
    if (typeof given !== 'string' || given === '') return null;
    let found: Operator | null = null;
    const g = Buffer.from(given);
    for (const o of this.list) {
      const t = Buffer.from(o.token);
      if (g.length === t.length && timingSafeEqual(g, t)) found = o;
    }
    return found;
  }

  byName(name: string): Operator | null {
    return this.list.find((o) => o.name === name) ?? null;
  }
}

/** A fingerprint of an operator's current token: sessions signed in under an older token no longer match. */
export function tokenFingerprint(o: Operator): string {
  return createHmac('sha256', o.token).update(`switchyard-operator:${o.name}`).digest('base64url');
}

function tokenProblem(what: string, token: string): string | null {
  if (token.length < MIN_TOKEN_LENGTH || /[\s,:]/.test(token)) return `${what} must be at least ${MIN_TOKEN_LENGTH} characters without spaces, commas or colons (try: openssl rand -hex 24)`;
  return null;
}

/** The operators the environment names, or the one problem with it (which variable, which entry). */
export function operatorsFromEnv(env: NodeJS.ProcessEnv = process.env): { ok: true; operators: Operators } | { ok: false; problem: string } {
  const list: Operator[] = [];
  const admin = env[ADMIN_TOKEN_ENV];
  if (admin !== undefined && admin !== '') {
    const p = tokenProblem(ADMIN_TOKEN_ENV, admin);
    if (p !== null) return { ok: false, problem: p };
    list.push({ name: 'admin', token: admin });
  }
  const spec = env[OPERATORS_ENV];
  if (spec !== undefined && spec.trim() !== '') {
    for (const [i, entry] of spec.split(',').entries()) {
      const at = entry.indexOf(':');
      const name = (at < 0 ? entry : entry.slice(0, at)).trim();
      const token = at < 0 ? '' : entry.slice(at + 1).trim();
      const where = `${OPERATORS_ENV} entry ${i + 1}`;
      if (!NAME.test(name)) return { ok: false, problem: `${where}: "${name}" is not an operator name (lower case letters, digits, . _ -, starting with a letter, at most 40)` };
      if (token === '') return { ok: false, problem: `${where} (${name}): give name:token` };
      const p = tokenProblem(`${where} (${name}): the token`, token);
      if (p !== null) return { ok: false, problem: p };
      if (list.some((o) => o.name === name)) return { ok: false, problem: `${where}: operator "${name}" is named twice${name === 'admin' ? ` (admin is ${ADMIN_TOKEN_ENV})` : ''}` };
      if (list.some((o) => o.token === token)) return { ok: false, problem: `${where} (${name}): this token is already another operator's; each operator needs their own` };
      list.push({ name, token });
    }
  }
  return { ok: true, operators: new Operators(list) };
}

export class OperatorIdentityError extends Error {
  override readonly name = 'OperatorIdentityError';
}

/** Who runs this CLI command: the operator whose token SWITCHYARD_OPERATOR_TOKEN holds. */
export function cliOperator(env: NodeJS.ProcessEnv = process.env): Operator {
  const parsed = operatorsFromEnv(env);
  if (!parsed.ok) throw new OperatorIdentityError(parsed.problem);
  if (parsed.operators.size === 0) {
    throw new OperatorIdentityError(`this command is recorded in the audit trail under your operator name: configure ${OPERATORS_ENV} (name:token,...) or ${ADMIN_TOKEN_ENV}, and set ${OPERATOR_TOKEN_ENV} to your token`);
  }
  const given = env[OPERATOR_TOKEN_ENV];
  if (given === undefined || given === '') throw new OperatorIdentityError(`this command is recorded in the audit trail under your operator name: set ${OPERATOR_TOKEN_ENV} to your operator token`);
  const op = parsed.operators.byToken(given);
  if (op === null) throw new OperatorIdentityError(`${OPERATOR_TOKEN_ENV} is not the token of any operator in ${OPERATORS_ENV} or ${ADMIN_TOKEN_ENV}`);
  return op;
}
