// Bearer authentication. A missing, malformed, wrong or rotated key is the same 401: the answer
// does not tell which part was wrong.

import type { NextFunction, Request, Response } from 'express';
import type { DbOrTx } from '../store/db.ts';
import { authenticateMerchant } from '../store/merchants.ts';
import { ApiProblem } from './problems.ts';

export function bearerAuth(db: DbOrTx) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    const match = header === undefined ? null : /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header.trim());
    const merchant = match === null ? null : await authenticateMerchant(db, match[1]!);
    if (merchant === null) {
      res.set('WWW-Authenticate', 'Bearer realm="switchyard"');
      throw new ApiProblem('unauthorized', header === undefined ? 'send Authorization: Bearer <api_key>' : 'the API key is not valid');
    }
    res.locals['merchantId'] = merchant.id;
    next();
  };
}
