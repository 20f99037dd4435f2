// Stripe's error envelope `{error:{type, code, decline_code, message, param, ...}}` and the statuses
// stripe-node maps to its error classes (400 invalid request, 401 auth, 402 card, 404 missing, 409 conflict).

export interface StripeErrorBody {
  readonly type: 'card_error' | 'invalid_request_error' | 'idempotency_error' | 'api_error';
  readonly code?: string;
  readonly decline_code?: string;
  readonly message: string;
  readonly param?: string;
  readonly charge?: string;
  readonly payment_intent?: unknown;
  readonly doc_url?: string;
}

/**
 * A failed request. `storable` says whether the idempotency layer keeps the answer: Stripe stores
 * results once execution has begun (declines, wrong-state errors, 500s) but not parameter validation.
 */
export class StripeRequestFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
    readonly storable: boolean,
  ) {
    super(error.message);
  }
}

const DOCS = 'https://stripe.com/docs/error-codes';

export function invalidParam(param: string, message: string, code = 'parameter_invalid'): StripeRequestFailure {
  return new StripeRequestFailure(400, { type: 'invalid_request_error', code, param, message, doc_url: `${DOCS}/${code.replaceAll('_', '-')}` }, false);
}

export function missingParam(param: string): StripeRequestFailure {
  return invalidParam(param, `Missing required param: ${param}.`, 'parameter_missing');
}

export function unknownParam(param: string): StripeRequestFailure {
  return invalidParam(param, `Received unknown parameter: ${param}`, 'parameter_unknown');
}

export function resourceMissing(kind: string, id: string, param?: string): StripeRequestFailure {
  const status = param === undefined ? 404 : 400;
  return new StripeRequestFailure(
    status,
    { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${kind}: '${id}'`, ...(param !== undefined && { param }), doc_url: `${DOCS}/resource-missing` },
    false,
  );
}

/** A request that was valid but hit the object in the wrong state; stored under the key. */
export function stateError(code: string, message: string, extra: Partial<StripeErrorBody> = {}): StripeRequestFailure {
  return new StripeRequestFailure(400, { type: 'invalid_request_error', code, message, ...extra, doc_url: `${DOCS}/${code.replaceAll('_', '-')}` }, true);
}

export function authenticationFailure(): StripeRequestFailure {
  return new StripeRequestFailure(401, { type: 'invalid_request_error', message: 'Invalid API Key provided. You did not provide a valid secret key for this sandbox.' }, false);
}

export function unrecognizedUrl(method: string, path: string): StripeRequestFailure {
  return new StripeRequestFailure(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` }, false);
}

export function serverError(message = 'An unknown error occurred'): StripeRequestFailure {
  return new StripeRequestFailure(500, { type: 'api_error', message }, true);
}

export function idempotencyMismatch(key: string): StripeRequestFailure {
  return new StripeRequestFailure(
    400,
    {
      type: 'idempotency_error',
      message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
    },
    false,
  );
}

export function idempotencyKeyInUse(key: string): StripeRequestFailure {
  return new StripeRequestFailure(
    409,
    {
      type: 'invalid_request_error',
      code: 'idempotency_key_in_use',
      message: `There is currently another in-progress request using this Stripe-Idempotency-Key ('${key}'). Please try again later.`,
    },
    false,
  );
}
