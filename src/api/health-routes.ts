// Liveness and readiness, without authentication: /healthz says the process answers; /readyz
// says it can serve (Postgres, Redis and a loaded config), and which config snapshot it serves and
// whether the file on disk still matches it. It also reports outbox rows no worker
// can take (their connector account is not in the config) without going not-ready: the process
// serves every other account, and taking it out of rotation would not bring the account back.

import express from 'express';
import type { Router } from 'express';
import { sql } from 'drizzle-orm';
import type { Runtime } from '../app/runtime.ts';
import type { ConfigStatus, DiskState } from '../routing/config-holder.ts';
import { TIMER_QUEUE } from '../jobs/queues.ts';
import { describeUnpublishable, unpublishableRows } from '../jobs/unpublishable-rows.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';

const CHECK_TIMEOUT_MS = 2000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function check(what: string, probe: () => Promise<unknown>): Promise<string> {
  try {
    await within(probe(), what);
    return 'ok';
  } catch (err) {
    return `failing: ${safeErrorText(err)}`;
  }
}

/**
 * The snapshot served and whether the file on disk is the one it came from. Reported, never a
 * reason to be not ready: the old snapshot is sound, and a bad edit rolled out to every process
 * would otherwise take the whole fleet out of rotation at once.
 */
function configReport(status: ConfigStatus, disk: DiskState): Record<string, unknown> {
  const last = status.lastReload;
  return {
    snapshot: status.snapshot,
    file: status.file,
    loaded_at: status.loadedAt.toISOString(),
    file_on_disk: disk.state === 'unreadable' ? `unreadable (${disk.reason})` : disk.state,
    last_reload: last === null ? null : {
      result: last.result, trigger: last.trigger, at: last.at.toISOString(),
      ...(last.problems.length === 0 ? {} : { problems: last.problems.map((p) => `${p.path}: ${p.message}`) }),
    },
  };
}

export function healthRoutes(rt: Runtime | (() => Runtime | null)): Router {
  const runtimeOf = typeof rt === 'function' ? rt : () => rt;
  const router = express.Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const current = runtimeOf();
    if (current === null) {
      res.status(503).json({ status: 'starting', checks: {} });
      return;
    }
    const [postgres, redis, outbox] = await Promise.all([
      check('postgres', () => current.database.db.execute(sql`SELECT 1`)),
      // A count is one round trip to Redis through the producer connection the API enqueues with.
      check('redis', () => current.queues.get(TIMER_QUEUE).count()),
      // Reported, never a reason to be not ready.
      within(unpublishableRows(current.database.db, current.outboxAccounts), 'outbox').then(
        (rows) => describeUnpublishable(rows, current.orphanGraceMs),
        (err: unknown) => `not read: ${safeErrorText(err)}`,
      ),
    ]);
    const status = current.config.status();
    const disk = await current.config.diskState();
    const ready = postgres === 'ok' && redis === 'ok';
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { postgres, redis, config: status.snapshot, outbox }, config: configReport(status, disk) });
  });
  return router;
}
