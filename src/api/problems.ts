// RFC 9457 problem details. The codes are the merchant contract (issue 8): a client switches on
// `code`, so the list is closed and every answer names one of them.

import type { z } from 'zod';
import { VaultUnavailableError } from '../vault/vault-unavailable.ts';

export const PROBLEMS = {
  validation_error: { status: 400, title: 'The request is not valid' },
  malformed_json: { status: 400, title: 'The body is not valid JSON' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key header missing' },
  idempotency_key_invalid: { status: 400, title: 'Idempotency-Key header invalid' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  insufficient_role: { status: 403, title: 'The API key\'s role does not allow this operation' },
  raw_card_data_not_allowed: { status: 403, title: 'This merchant is not allowed to send card numbers: use the hosted card form or POST /v1/tokens' },
  origin_not_allowed: { status: 403, title: 'The browser origin is not one the merchant allowed' },
  not_found: { status: 404, title: 'Not found' },
  invalid_state: { status: 409, title: 'The payment is not in a state that allows this' },
  endpoint_limit_reached: { status: 409, title: 'The merchant has as many webhook endpoints as allowed' },
  signing_key_rotation_pending: { status: 409, title: 'The last rotation\'s key has not started signing yet' },
  last_full_key: { status: 409, title: 'The merchant\'s last working full key of a mode cannot be deleted' },
  key_limit_reached: { status: 409, title: 'The merchant has as many working API keys as allowed' },
  dispute_not_open: { status: 409, title: 'The dispute can no longer be answered: it is decided, accepted or its evidence was submitted' },
  idempotency_request_in_progress: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused with another request' },
  amount_exceeds_authorized: { status: 422, title: 'Amount exceeds what remains authorized' },
  amount_exceeds_captured: { status: 422, title: 'Amount exceeds what remains captured' },
  dispute_action_refused: { status: 422, title: 'The provider refused the dispute action' },
  multicapture_unsupported: { status: 422, title: 'The routed connector keeps nothing open after a capture: final: false is refused' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  capture_declined: { status: 402, title: 'The provider declined the capture' },
  refund_declined: { status: 402, title: 'The provider declined the refund' },
  void_declined: { status: 402, title: 'The provider declined the void' },
  capture_rejected: { status: 409, title: 'The capture was rejected before the provider processed it' },
  refund_rejected: { status: 409, title: 'The refund was rejected before the provider processed it' },
  void_rejected: { status: 409, title: 'The void was rejected before the provider processed it' },
  rate_limited: { status: 429, title: 'Too many requests' },
  payment_method_quota_exceeded: { status: 429, title: 'The merchant stored as many payment methods this hour as allowed (SWITCHYARD_TOKENS_PER_HOUR)' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  overloaded: { status: 503, title: 'Too many requests waiting; nothing was done' },
} as const;

export type ProblemCode = keyof typeof PROBLEMS;

export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** RFC 9457 extension members of an operation's failure: what the provider said, and our reading of it. */
export interface FailureMembers {
  /** Ours: the normalized decline code, or the refusal reason (validation, connection_refused, ...). */
  readonly failure_code: string;
  /** The provider's own decline code, when it gave one. */
  readonly decline_code?: string;
  /** Our class of the decline: hard (do not retry) or soft (may succeed later). */
  readonly decline_class?: 'hard' | 'soft';
  /** The payment the operation belongs to: its resource shows the operation with the same failure. */
  readonly payment_id: string;
}

/** RFC 9457 extension members of insufficient_role: the roles that may call the operation, and the key's own. */
export interface RoleMembers {
  readonly required_roles: readonly string[];
  readonly key_role: string | null;
}

export interface Problem extends Partial<FailureMembers>, Partial<RoleMembers> {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ProblemCode;
  readonly errors?: readonly FieldError[];
}

export const PROBLEM_TYPE_BASE = 'https://switchyard.dev/problems/';

/** A problem to answer with; thrown by handlers and turned into a response by the app's error handler. */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: readonly FieldError[],
    /** Seconds, for 409 in progress, 429 and 503. */
    readonly retryAfterS?: number,
    readonly failure?: FailureMembers | RoleMembers,
  ) {
    super(`${code}: ${detail}`);
  }

  get status(): number {
    return PROBLEMS[this.code].status;
  }

  toProblem(): Problem {
    const { status, title } = PROBLEMS[this.code];
    return {
      type: `${PROBLEM_TYPE_BASE}${this.code}`, title, status, detail: this.detail, code: this.code,
      ...(this.errors === undefined ? {} : { errors: this.errors }), ...(this.failure ?? {}),
    };
  }
}

function pathOf(path: readonly PropertyKey[]): string {
  // A field named "" (hostile input) must still be named: an empty path would name nothing.
  return path.map((k) => (k === '' ? '""' : String(k))).join('.');
}

/** Zod issues as field errors; an unknown field is named by its own path. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) out.push({ path: pathOf([...issue.path, k]), message: 'unknown field' });
    } else {
      out.push({ path: pathOf(issue.path) || '(body)', message: issue.message });
    }
  }
  return out;
}

export function validationProblem(error: z.ZodError, where: 'body' | 'query'): ApiProblem {
  const errors = fieldErrors(error);
  const first = errors[0];
  const detail = first === undefined ? `the ${where} is not valid` : `${first.path}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
  return new ApiProblem('validation_error', detail, errors);
}

/**
 * The vault process (SWITCHYARD_VAULT_URL) gave no answer: no card was stored or read for this
 * request and nothing of it was written, so the merchant may simply retry.
 */
export function vaultUnavailableProblem(err: unknown): ApiProblem | null {
  if (!(err instanceof VaultUnavailableError)) return null;
  return new ApiProblem('service_unavailable', 'the card vault is unavailable: nothing was stored or done; retry shortly', undefined, 2);
}
