// What the card tests share: a gateway with the merchant API, a view of its vault database (the
// tests' oracle for "nothing stored"), and a scan of the gateway's database for a card number.

import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { withDatabase } from '../../../src/store/database-url.ts';
import { setAllowedOrigins } from '../../../src/store/merchants.ts';
import type { ApiGateway } from '../api/helpers.ts';

/** A card number and code no test sends anywhere else: what the scans look for. */
export const CARD = { number: '4000056655665556', exp_month: 12, exp_year: 2039, cvc: '737' } as const;

export async function vaultRows(api: ApiGateway): Promise<number> {
  const client = new pg.Client({ connectionString: withDatabase(api.gw.db.url, `${api.gw.db.name}_vault`) });
  try {
    await client.connect();
  } catch (err) {
    // The vault creates its database on first use: none yet, nothing stored.
    if ((err as { code?: unknown }).code === '3D000') return 0;
    throw err;
  }
  try {
    const found = await client.query<{ ok: boolean }>("SELECT to_regclass('payment_methods') IS NOT NULL AS ok");
    if (found.rows[0]?.ok !== true) return 0;
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM payment_methods')).rows[0]!.n);
  } finally {
    await client.end();
  }
}

export async function allowOrigins(api: ApiGateway, merchantId: string, origins: string[]): Promise<void> {
  await setAllowedOrigins(api.gw.rt.database.db, merchantId, origins);
}

/** Tables (and columns) of the gateway's database holding any of these strings: every row as text, and every bytea column by its bytes. */
export async function gatewayTablesHolding(api: ApiGateway, needles: readonly string[]): Promise<string[]> {
  const pool = api.gw.db.pool;
  const tables = await pool.query<{ name: string }>("SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
  const bytea = await pool.query<{ t: string; c: string }>("SELECT quote_ident(table_name) AS t, quote_ident(column_name) AS c FROM information_schema.columns WHERE table_schema = 'public' AND data_type = 'bytea'");
  const hits: string[] = [];
  for (const needle of needles) {
    for (const { name } of tables.rows) {
      const r = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${name} x WHERE x::text LIKE '%' || $1 || '%'`, [needle]);
      if (Number(r.rows[0]!.n) > 0) hits.push(name);
    }
    for (const { t, c } of bytea.rows) {
      const r = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t} WHERE position(convert_to($1, 'UTF8') IN ${c}) > 0`, [needle]);
      if (Number(r.rows[0]!.n) > 0) hits.push(`${t}.${c}`);
    }
  }
  return hits;
}

export interface ShopPage {
  readonly origin: string;
  close(): Promise<void>;
}

/** A merchant's checkout on http://localhost:<port>: frames the form, and keeps every message it receives. */
export async function startShop(formUrl: () => string): Promise<ShopPage> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><title>Checkout</title></head><body>
<h1>Checkout</h1>
<iframe id="card" src="${formUrl()}" width="460" height="320"></iframe>
<script>
window.received = [];
window.addEventListener('message', function (e) { window.received.push({ origin: e.origin, data: e.data }); });
</script></body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export interface Received {
  readonly origin: string;
  readonly data: { readonly type: string; readonly payment_method?: unknown };
}
