// Where card data must never be: every table of the gateway's database (idempotency records,
// outbox rows, transition history, merchant events included), every Redis key of the gateway
// (BullMQ jobs included) and its log lines. The scan looks for the card numbers it is given (as
// digits, in groups, and hex-encoded as a bytea column prints) and for a card code under any of the
// names it travels by. A finding names where, never the value. The vault's own database is not
// scanned: it holds the numbers sealed, and nothing else.

import type { Redis } from 'ioredis';
import { createPool, endPool } from '../pg-kit/index.ts';

export interface CardDataScanTarget {
  /** The gateway's database (never the vault's). */
  readonly databaseUrl: string;
  /** The gateway's Redis and its key prefix (BullMQ queues, pub/sub state). */
  readonly redis?: { readonly client: Redis; readonly prefix: string };
  /** Captured text (log lines, merchant event bodies as delivered), by name. */
  readonly texts?: readonly { readonly name: string; readonly lines: readonly string[] }[];
}

export interface CardDataFinding {
  /** `table payments`, `redis key sy:…`, `log gateway line 12`. */
  readonly where: string;
  readonly what: 'card_number' | 'card_code';
}

// A code under the names it travels by: JSON ("cvc": "737"), form fields (card[cvc]=737), Adyen's (cvc), Stripe's.
const CODE_FIELD = /(?:["']?(?:cvc|cvv|cvc2|cvv2|cvn|security_?code|card_?code|cardVerificationCode)["']?\]?\s*[:=]\s*["']?\d{3,4}\b)/i;

/** Finds any of `numbers` (13 to 19 digits each) or a card code field in text. */
export function cardDataIn(text: string, numbers: readonly string[]): CardDataFinding['what'] | null {
  for (const n of numbers) {
    if (matchesNumber(text, n)) return 'card_number';
  }
  return CODE_FIELD.test(text) ? 'card_code' : null;
}

function matchesNumber(text: string, number: string): boolean {
  if (text.includes(number)) return true;
  if (text.includes(Buffer.from(number).toString('hex'))) return true;
  // Digits apart by single spaces or dashes (4242 4242 …): strip separators between digits only.
  return text.replace(/(\d)[ -](?=\d)/g, '$1').includes(number);
}

export async function scanForCardData(target: CardDataScanTarget, numbers: readonly string[]): Promise<CardDataFinding[]> {
  for (const n of numbers) if (!/^\d{13,19}$/.test(n)) throw new TypeError('scanForCardData takes card numbers of 13 to 19 digits');
  const findings: CardDataFinding[] = [];
  findings.push(...(await scanDatabase(target.databaseUrl, numbers)));
  if (target.redis !== undefined) findings.push(...(await scanRedis(target.redis.client, target.redis.prefix, numbers)));
  for (const t of target.texts ?? []) {
    t.lines.forEach((line, i) => {
      const what = cardDataIn(line, numbers);
      if (what !== null) findings.push({ where: `${t.name} line ${i + 1}`, what });
    });
  }
  return findings;
}

async function scanDatabase(url: string, numbers: readonly string[]): Promise<CardDataFinding[]> {
  const pool = createPool(url, { max: 1 });
  const findings: CardDataFinding[] = [];
  try {
    const tables = await pool.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
    );
    for (const t of tables.rows) {
      const rel = `${quoteIdent(t.schema)}.${quoteIdent(t.name)}`;
      // Row by row as text: every column, JSON and bytea (as \x hex) included.
      const rows = await pool.query<{ row: string }>(`SELECT r::text AS row FROM ${rel} r`);
      const seen = new Set<CardDataFinding['what']>();
      for (const r of rows.rows) {
        const what = cardDataIn(r.row, numbers);
        if (what !== null && !seen.has(what)) {
          seen.add(what);
          findings.push({ where: `table ${t.schema}.${t.name}`, what });
        }
      }
    }
  } finally {
    await endPool(pool);
  }
  return findings;
}

async function scanRedis(client: Redis, prefix: string, numbers: readonly string[]): Promise<CardDataFinding[]> {
  const findings: CardDataFinding[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const text = await redisValueText(client, key);
      const what = cardDataIn(text, numbers);
      if (what !== null) findings.push({ where: `redis key ${key}`, what });
    }
  } while (cursor !== '0');
  return findings;
}

async function redisValueText(client: Redis, key: string): Promise<string> {
  switch (await client.type(key)) {
    case 'string':
      return (await client.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await client.hgetall(key));
    case 'list':
      return (await client.lrange(key, 0, -1)).join('\n');
    case 'set':
      return (await client.smembers(key)).join('\n');
    case 'zset':
      return (await client.zrange(key, 0, -1)).join('\n');
    case 'stream':
      return JSON.stringify(await client.xrange(key, '-', '+'));
    default:
      return '';
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
