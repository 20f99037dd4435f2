// The retention job: deletes idempotency records past their expiry. Every API process runs it;
// concurrent deletes of the same rows are harmless.

import type { DbOrTx } from '../store/db.ts';
import { purgeExpiredIdempotencyRecords } from '../store/idempotency.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

export function startIdempotencyPurge(db: DbOrTx, opts: { now: () => Date; intervalMs?: number; log: (line: string) => void }): () => void {
  const run = (): void => {
    purgeExpiredIdempotencyRecords(db, opts.now()).then(
      (n) => {
        if (n > 0) opts.log(`idempotency: purged ${n} expired records`);
      },
      (err: unknown) => opts.log(`idempotency: purge failed: ${safeErrorText(err)}`),
    );
  };
  const timer = setInterval(run, opts.intervalMs ?? 3600_000);
  timer.unref();
  run();
  return () => clearInterval(timer);
}
