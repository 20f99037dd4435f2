// The vault's interface over HTTP, for `switchyard start --role vault`: tokenize, describe, reveal,
// forget a code, and health; nothing else. Every request carries SWITCHYARD_VAULT_TOKEN (checked
// before its body is read); bodies are JSON of at most 16 kB and are never logged, nor quoted in an
// answer. Only the reveal answer carries card data. The reveal's access (purpose, attempt, the
// asking process) travels with it, so the access log names the worker, not this process.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { presentsToken } from './service-token.ts';
import type { Vault } from './vault.ts';
import {
  describeRequest, forgetCodeRequest, requestDigestRequest, paymentMethodToWire, revealAccessOf, revealedToWire, revealRequest, tokenizeRequest,
  tokenizeResultToWire, VAULT_BODY_LIMIT_BYTES, VAULT_PATHS,
} from './wire.ts';
import type { VaultHealth } from './wire.ts';
import type { CardInput } from './card-checks.ts';

export interface VaultServiceOptions {
  /** SWITCHYARD_VAULT_TOKEN, and during a rotation SWITCHYARD_VAULT_PREVIOUS_TOKEN. */
  readonly tokens: readonly string[];
  /** What /v1/health says of the keys: a gateway with live accounts refuses a vault on the development key. */
  readonly keys: VaultHealth['keys'];
  /** Throws when the vault cannot serve (its database unreachable). */
  readonly ping: () => Promise<void>;
  readonly log: (line: string) => void;
}

class Refusal extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

function parsed<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  // The issue's path and kind only: zod's own messages may describe the value.
  if (!r.success) throw new Refusal(400, 'bad_request', r.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`).join('; '));
  return r.data;
}

/** The first line of what failed, without its message (a driver's may quote a value). */
function failureName(err: unknown): string {
  const e = err as { name?: unknown; code?: unknown } | null;
  const name = typeof e?.name === 'string' ? e.name : typeof err;
  return typeof e?.code === 'string' ? `${name} (${e.code})` : name;
}

export function createVaultApp(vault: Vault, o: VaultServiceOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.use((req, res, next) => {
    res.set('Cache-Control', 'no-store');
    if (presentsToken(req.get('authorization'), o.tokens)) {
      next();
      return;
    }
    o.log(`vault: refused ${req.method} ${req.path.slice(0, 64)} from ${req.socket.remoteAddress ?? 'unknown'}: the token is missing or wrong`);
    res.set('WWW-Authenticate', 'Bearer');
    res.status(401).json({ error: 'unauthorized', message: 'a valid bearer token (SWITCHYARD_VAULT_TOKEN) is required' });
  });
  app.get(VAULT_PATHS.health, async (_req, res) => {
    try {
      await o.ping();
    } catch (err) {
      o.log(`vault: health: its database does not answer: ${failureName(err)}`);
      res.status(503).json({ error: 'vault_down', message: 'the vault database does not answer' });
      return;
    }
    const answer: VaultHealth = { status: 'ok', keys: o.keys };
    res.json(answer);
  });
  app.use((req, _res, next) => {
    if (req.method === 'POST' && !req.is('application/json')) throw new Refusal(415, 'unsupported_media_type', 'the body must be application/json');
    next();
  });
  app.use(express.json({ limit: VAULT_BODY_LIMIT_BYTES, strict: true, type: 'application/json' }));

  app.post(VAULT_PATHS.tokenize, async (req, res) => {
    const b = parsed(tokenizeRequest, req.body);
    res.json(tokenizeResultToWire(await vault.tokenize(b.merchant_id, b.card as unknown as CardInput)));
  });
  app.post(VAULT_PATHS.describe, async (req, res) => {
    const b = parsed(describeRequest, req.body);
    const pm = await vault.describe(b.merchant_id, b.id);
    res.json({ payment_method: pm === null ? null : paymentMethodToWire(pm) });
  });
  app.post(VAULT_PATHS.reveal, async (req, res) => {
    const b = parsed(revealRequest, req.body);
    res.json(revealedToWire(await vault.reveal(b.id, revealAccessOf(b))));
  });
  app.post(VAULT_PATHS.forgetCode, async (req, res) => {
    const b = parsed(forgetCodeRequest, req.body);
    res.json({ forgotten: await vault.forgetCode(b.id) });
  });
  app.post(VAULT_PATHS.requestDigest, async (req, res) => {
    const b = parsed(requestDigestRequest, req.body);
    res.json({ digest: await vault.requestDigest(b.merchant_id, b.text) });
  });

  app.use((req: Request) => {
    throw new Refusal(404, 'not_found', `no route ${req.method} ${req.path.slice(0, 64)}`);
  });
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof Refusal) {
      res.status(err.status).json({ error: err.code, message: err.message });
      return;
    }
    // The body parser's own messages quote the body (JSON.parse's does): never passed on.
    const type = (err as { type?: unknown } | null)?.type;
    if (type === 'entity.too.large') {
      res.status(413).json({ error: 'payload_too_large', message: `the body is larger than ${VAULT_BODY_LIMIT_BYTES} bytes` });
      return;
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported') {
      res.status(400).json({ error: 'bad_request', message: 'the body is not UTF-8 JSON' });
      return;
    }
    // Its database gone is an outage the caller waits out (503); anything else failed on this request (500).
    void o.ping().then(() => false, () => true).then((down) => {
      o.log(`vault: ${req.path.slice(0, 64)} failed: ${failureName(err)}${down ? ' (its database does not answer)' : ''}`);
      res.status(down ? 503 : 500).json(down
        ? { error: 'vault_down', message: 'the vault database does not answer' }
        : { error: 'vault_failure', message: `the vault could not answer (${failureName(err)})` });
    });
  });
  return app;
}

export interface VaultListener {
  readonly url: string;
  close(graceMs?: number): Promise<void>;
}

export async function listenVault(app: Express, host: string, port: number): Promise<VaultListener> {
  const server = createServer(app);
  // A peer that stops sending mid-request does not hold a socket for ever.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    async close(graceMs = 5_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
