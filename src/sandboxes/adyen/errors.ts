// Adyen's ServiceError answers. The HTTP status and the body's `status` always agree: the library
// reports body.status as the exception's statusCode (research/providers.md C9).

export type ErrorType = 'validation' | 'security' | 'internal' | 'configuration';

export class AdyenServiceError extends Error {
  override readonly name = 'AdyenServiceError';
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly errorType: ErrorType,
    readonly extraHeaders: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body(pspReference: string): Record<string, unknown> {
    return { status: this.status, errorCode: this.errorCode, message: this.message, errorType: this.errorType, pspReference };
  }
}

export const unauthorized = (): AdyenServiceError => new AdyenServiceError(401, '000', 'HTTP Status Response - Unauthorized', 'security');
export const notAllowed = (what: string): AdyenServiceError => new AdyenServiceError(403, '010', `Not allowed: ${what}`, 'security');
export const notFound = (path: string): AdyenServiceError => new AdyenServiceError(404, '000', `Not Found: ${path}`, 'validation');
export const malformedJson = (detail: string): AdyenServiceError => new AdyenServiceError(400, '702', `Unexpected input: ${detail}`, 'validation');
export const requiredField = (field: string): AdyenServiceError => new AdyenServiceError(422, '130', `Required field '${field}' is not provided.`, 'validation');
export const invalidField = (field: string, why: string): AdyenServiceError => new AdyenServiceError(422, '130', `Field '${field}' is not valid: ${why}`, 'validation');
export const invalidAmount = (why: string): AdyenServiceError => new AdyenServiceError(422, '137', `Invalid amount specified: ${why}`, 'validation');
export const unknownPspReference = (): AdyenServiceError => new AdyenServiceError(422, '167', 'Original pspReference required for this operation', 'validation');
export const idempotencyKeyTooLong = (): AdyenServiceError => new AdyenServiceError(422, '702', 'Idempotency-Key may not exceed 64 characters', 'validation');
/** A same-key request while the first is still running: retry later with the same key. */
export const requestInProgress = (): AdyenServiceError =>
  new AdyenServiceError(409, '704', 'request already processed or in progress', 'validation', { 'transient-error': 'true' });
/** Adyen's rate limiter: nothing processed. */
export const rateLimited = (): AdyenServiceError => new AdyenServiceError(429, '429', 'Too Many Requests (sandbox fault)', 'security');
export const unavailable = (): AdyenServiceError => new AdyenServiceError(503, '905', 'Service unavailable (sandbox fault)', 'internal');
export const internalError = (detail: string): AdyenServiceError => new AdyenServiceError(500, '905', `Internal error: ${detail}`, 'internal');
