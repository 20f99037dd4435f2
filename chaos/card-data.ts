// The invariant card_data_contained (issue 44): after every run, the vaulted plans' card number and
// any card code appear nowhere in the gateway — no table of its database (idempotency records,
// outbox rows, history, merchant events included), no Redis key under its prefix, no line of any
// process's log in the run directory. The vault's own database is not scanned: it holds the number
// sealed, as it must.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { scanForCardData } from '../src/ops/card-data-scan.ts';
import type { Violation } from './invariants.ts';
import { VAULTED_CARD } from './plan.ts';

export async function cardDataViolations(databaseUrl: string, redisUrl: string, prefix: string, runDir: string): Promise<Violation[]> {
  const texts = readdirSync(runDir).filter((f) => f.endsWith('.log')).map((f) => ({ name: `log ${f}`, lines: readFileSync(join(runDir, f), 'utf8').split('\n') }));
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  try {
    await redis.connect();
    const findings = await scanForCardData({ databaseUrl, redis: { client: redis, prefix }, texts }, [VAULTED_CARD]);
    return findings.map((f) => ({ invariant: 'card_data_contained' as const, paymentId: null, detail: `${f.what === 'card_number' ? 'the card number' : 'a card code'} in ${f.where}` }));
  } finally {
    redis.disconnect();
  }
}
