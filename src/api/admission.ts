// Admission (docs/api.md, "Overload"): every /v1 request this process has taken and not yet
// answered counts against one bound — requests waiting for a database connection, for the
// provider's outcome, or behind other work on the event loop. When the bound is reached the next
// request is refused at once with 503 `overloaded` and `Retry-After`, before authentication, body
// parsing and the idempotency claim: nothing is read or written for it, so no payment, no
// idempotency record, and the same request may be retried with the same key.

import type { NextFunction, Request, Response } from 'express';
import { ApiProblem } from './problems.ts';

export interface Admission {
  /** Requests in flight in this process at most; the next one is shed. */
  readonly maxInFlight: number;
  /** The Retry-After of a shed request, in seconds. */
  readonly retryAfterS: number;
}

export interface AdmissionGate {
  (req: Request, res: Response, next: NextFunction): void;
  /** Requests admitted and not yet answered (or abandoned by their client). */
  inFlight(): number;
}

export function admissionGate(admission: Admission): AdmissionGate {
  if (!Number.isInteger(admission.maxInFlight) || admission.maxInFlight < 1) throw new RangeError(`maxInFlight must be an integer >= 1, got ${admission.maxInFlight}`);
  let inFlight = 0;
  const gate = (_req: Request, res: Response, next: NextFunction): void => {
    if (inFlight >= admission.maxInFlight) {
      throw new ApiProblem(
        'overloaded',
        `${admission.maxInFlight} requests are already waiting for a connection or an answer in this process; nothing was done: retry in ${admission.retryAfterS} s with the same Idempotency-Key`,
        undefined, admission.retryAfterS,
      );
    }
    inFlight++;
    // 'close' fires once, whether the answer was sent or the client went away first.
    res.once('close', () => {
      inFlight--;
    });
    next();
  };
  return Object.assign(gate, { inFlight: () => inFlight });
}
