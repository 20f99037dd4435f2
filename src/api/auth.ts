// Bearer authentication with the secret key. A missing, malformed, wrong or rotated key is the same
// 401: the answer does not tell which part was wrong. A publishable key (pk_sy_…) is a 401 too: it
// opens only POST /v1/tokens (src/api/token-routes.ts, mounted before this) and the hosted form.

import type { NextFunction, Request, Response } from 'express';
import type { DbOrTx } from '../store/db.ts';
import { authenticateMerchant, PUBLISHABLE_KEY_PREFIX } from '../store/merchants.ts';
import { ApiProblem } from './problems.ts';

export function bearerAuth(db: DbOrTx) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    const match = header === undefined ? null : /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header.trim());
    const merchant = match === null ? null : await authenticateMerchant(db, match[1]!);
    if (merchant === null) {
      res.set('WWW-Authenticate', 'Bearer realm="switchyard"');
      const publishable = match?.[1]?.startsWith(PUBLISHABLE_KEY_PREFIX) === true;
      throw new ApiProblem('unauthorized', header === undefined ? 'send Authorization: Bearer <api_key>'
        : publishable ? 'a publishable key opens only POST /v1/tokens and the hosted card form: send the secret key (sk_sy_…)' : 'the API key is not valid');
    }
    res.locals['merchantId'] = merchant.id;
    next();
  };
}
