// Issue 48: the OpenAPI document builds a working client. openapi-typescript generates the types from
// the running gateway's /openapi.json, a small program written against them with openapi-fetch is
// compiled by tsc (strict: an answer typed `unknown` would not compile) and then runs the README's
// journey — create, capture, refund, list, events — against the gateway.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiGateway } from './helpers.ts';
import type { ApiGateway } from './helpers.ts';

const run = promisify(execFile);

// Inside the project, so the program finds openapi-fetch in node_modules (.data is git-ignored).
const dir = join('.data', `generated-client-${process.pid}`);
let api: ApiGateway;

beforeAll(async () => {
  api = await startApiGateway('generated_client', { authorizationWaitMs: 8000, modificationWaitMs: 8000, rateLimits: null });
  mkdirSync(dir, { recursive: true });
});
afterAll(async () => {
  if (process.env['KEEP_CLIENT'] === undefined) rmSync(dir, { recursive: true, force: true });
  await api?.close();
});

const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

const client = createClient<paths>({ baseUrl: process.env['BASE_URL']!, headers: { authorization: \`Bearer \${process.env['API_KEY']!}\` } });
const key = (what: string): { header: { 'Idempotency-Key': string } } => ({ header: { 'Idempotency-Key': \`client-\${process.env['RUN']!}-\${what}\` } });

async function main(): Promise<void> {
  const created = await client.POST('/v1/payments', {
    params: key('create'),
    body: { amount: 5000, currency: 'EUR', reference: 'generated-client', capture_method: 'manual', payment_method: { type: 'card', test_card: '4242424242424242' } },
  });
  if (created.data === undefined) throw new Error(\`create: \${JSON.stringify(created.error)}\`);
  const id: string = created.data.id;
  const authorized: string = created.data.status;
  const captured = await client.POST('/v1/payments/{id}/capture', { params: { path: { id }, ...key('capture') }, body: {} });
  if (captured.data === undefined) throw new Error(\`capture: \${JSON.stringify(captured.error)}\`);
  const amountCaptured: number = captured.data.amount_captured;
  const refund = await client.POST('/v1/payments/{id}/refunds', { params: { path: { id }, ...key('refund') }, body: { amount: 1200 } });
  if (refund.data === undefined) throw new Error(\`refund: \${JSON.stringify(refund.error)}\`);
  const refundStatus: string = refund.data.status;
  const list = await client.GET('/v1/payments', { params: { query: { limit: 5 } } });
  if (list.data === undefined) throw new Error('list');
  const listed: boolean = list.data.data.some((p) => p.id === id);
  const events = await client.GET('/v1/events', { params: { query: { limit: 20 } } });
  if (events.data === undefined) throw new Error(\`events: \${JSON.stringify(events.error)}\`);
  const types: string[] = events.data.data.map((e) => e.type);
  console.log(JSON.stringify({ id, authorized, amountCaptured, refundStatus, listed, types }));
}

await main();
`;

describe('a client generated from /openapi.json', () => {
  it('compiles under tsc --strict and runs the journey: create, capture, refund, list, events', async () => {
    const doc = await (await fetch(`${api.url}/openapi.json`)).json() as Parameters<typeof openapiTS>[0];
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(doc)));
    writeFileSync(join(dir, 'client.ts'), PROGRAM);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, skipLibCheck: true, types: ['node'] },
      files: ['client.ts'],
    }));
    try {
      await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', join(dir, 'tsconfig.json')]);
    } catch (err) {
      throw new Error(`tsc refused the generated client:\n${(err as { stdout?: string }).stdout ?? ''}`);
    }
    // Not execFileSync: the gateway answering the program runs in this process.
    const { stdout: out } = await run(process.execPath, ['--import', 'tsx', join(dir, 'client.ts')], {
      env: { ...process.env, BASE_URL: api.url, API_KEY: api.apiKey, RUN: String(process.pid) },
    });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { id: string; authorized: string; amountCaptured: number; refundStatus: string; listed: boolean; types: string[] };
    expect(r.id).toMatch(/^pay_/);
    expect(r.authorized).toBe('authorized');
    expect(r.amountCaptured).toBe(5000);
    expect(r.refundStatus).toBe('succeeded');
    expect(r.listed).toBe(true);
    expect(r.types).toEqual(expect.arrayContaining(['payment.authorized', 'payment.captured']));
  }, 120_000);
});
