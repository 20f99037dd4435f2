// Bearer authentication with a secret key. A missing, malformed, wrong, expired or deleted key is the
// same 401: the answer does not tell which part was wrong. A publishable key (pk_sy_…) is a 401 too:
// it opens only POST /v1/tokens (src/api/token-routes.ts, mounted before this) and the hosted form.
// The request then carries its merchant (res.locals.merchantId) and its key (res.locals.apiKey: id,
// kind, role, mode, never the secret): the role check reads it (src/api/key-roles.ts), the request's
// log line names the key's id.

import type { NextFunction, Request, Response } from 'express';
import type { DbOrTx } from '../store/db.ts';
import { authenticateSecretKey, PUBLISHABLE_KEY_PREFIX } from '../store/merchants.ts';
import { ApiProblem } from './problems.ts';

export function bearerAuth(db: DbOrTx, now: () => Date = () => new Date()) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    const match = header === undefined ? null : /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header.trim());
    const found = match === null ? null : await authenticateSecretKey(db, match[1]!, now());
    if (found === null) {
      res.set('WWW-Authenticate', 'Bearer realm="switchyard"');
      const publishable = match?.[1]?.startsWith(PUBLISHABLE_KEY_PREFIX) === true;
      throw new ApiProblem('unauthorized', header === undefined ? 'send Authorization: Bearer <api_key>'
        : publishable ? 'a publishable key opens only POST /v1/tokens and the hosted card form: send the secret key (sk_sy_…)' : 'the API key is not valid');
    }
    res.locals['merchantId'] = found.merchant.id;
    res.locals['merchantApiVersion'] = found.merchant.apiVersion;
    res.locals['apiKey'] = found.key;
    next();
  };
}
