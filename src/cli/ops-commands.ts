// Operator commands: dead letters, the ledger check, and the sandboxes run alone.

import { runSandboxes } from '../app/sandbox-runner.ts';
import { sandboxDatabaseUrl } from '../sandboxes/shared/database.ts';
import { maskDatabaseUrl } from '../store/database-url.ts';
import { ADYEN_POLICY } from '../connectors/adyen/defaults.ts';
import { STRIPE_POLICY } from '../connectors/stripe/defaults.ts';
import { DEFAULT_CORE_POLICY } from '../core/policy.ts';
import { countDeadLetters, listDeadLetters, replayDeadLetter, replayPlan } from '../jobs/dlq.ts';
import { QueueSet, TIMER_QUEUE, callQueueName, redisConnection } from '../jobs/queues.ts';
import { webhookQueueFor } from '../webhooks/webhook-jobs.ts';
import { checkLedger } from '../ledger/check.ts';
import { formatProblems, loadConfigFile } from '../routing/config-loader.ts';
import { parseDuration } from '../routing/duration.ts';
import { withDatabase } from './cli-database.ts';
import { CliInputError } from './cli-input-error.ts';
import { deadLetterAudit } from '../ops/dead-letters.ts';
import { cliOperator } from '../ops/operators.ts';


export async function dlqListCommand(databaseUrl: string, json: boolean): Promise<string> {
  return withDatabase(databaseUrl, async ({ db }) => {
    const rows = await listDeadLetters(db);
    const { count, oldest } = await countDeadLetters(db);
    if (json) return JSON.stringify({ count, oldest, dead_letters: rows });
    if (rows.length === 0) return 'no dead letters';
    const lines = rows.map((r) => `${r.id}\t${r.kind}\t${r.connector ?? '-'}\t${r.paymentId ?? '-'}\t${r.attempts} tries\t${r.lastError ?? ''}`);
    return [`${count} dead letter(s), oldest ${oldest}`, ...lines].join('\n');
  });
}

/** Each configured account's key retention (its override, else its connector's declared one); null without a config. */
function retentionsFrom(configFile: string | null): (account: string) => number | null {
  if (configFile === null) return () => null;
  const loaded = loadConfigFile(configFile);
  if (!loaded.ok) return () => null;
  return (account) => {
    const a = loaded.config.connectors[account];
    if (a === undefined) return null;
    const own = a.idempotency.retention === undefined ? null : parseDuration(a.idempotency.retention);
    return own ?? (a.type === 'adyen' ? ADYEN_POLICY.keyRetentionMs : STRIPE_POLICY.keyRetentionMs);
  };
}

export async function dlqReplayCommand(databaseUrl: string, redisUrl: string, prefix: string, idText: string, configFile: string | null = null): Promise<string> {
  if (!/^\d+$/.test(idText)) throw new CliInputError(`dead letter id "${idText}" is not a number (see switchyard dlq list)`);
  const id = Number(idText);
  const operator = cliOperator().name;
  return withDatabase(databaseUrl, async ({ db }) => {
    const row = (await listDeadLetters(db, 10_000)).find((r) => r.id === id);
    if (row === undefined) throw new CliInputError(`no dead letter ${id}`);
    // Said before the replay: a call whose key the provider may have forgotten is not sent again.
    const plan = await replayPlan(db, id, new Date(), retentionsFrom(configFile), DEFAULT_CORE_POLICY.retentionMarginMs);
    // The job to free sits in the queue of the row's kind: a webhook row's is not a call queue.
    const queue = row.kind === 'timer' ? TIMER_QUEUE : (webhookQueueFor(row.kind) ?? callQueueName(row.connector ?? ''));
    const redis = redisConnection(redisUrl, 'producer');
    const queues = new QueueSet(redis, prefix);
    try {
      const ok = await replayDeadLetter(db, queues, queue, id, deadLetterAudit(operator, id, { kind: row.kind, connector: row.connector, payment_id: row.paymentId }, new Date()));
      // The relay of any running gateway publishes the revived row within its sweep interval.
      return ok ? `dead letter ${id} replayed: pending again, the relay publishes it; ${plan.text}` : `dead letter ${id} was no longer dead`;
    } finally {
      await queues.close();
      redis.disconnect();
    }
  });
}

export async function ledgerCheckCommand(databaseUrl: string, json: boolean, heldBoundMs?: number): Promise<{ ok: boolean; text: string }> {
  return withDatabase(databaseUrl, async ({ db }) => {
    const r = await checkLedger(db, heldBoundMs === undefined ? {} : { heldBoundMs });
    if (json) return { ok: r.problems.length === 0, text: JSON.stringify(r) };
    if (r.problems.length === 0) return { ok: true, text: `ledger ok: ${r.transactions} transactions balance; ${r.payments} payments agree with their books` };
    return { ok: false, text: [`ledger check found ${r.problems.length} problem(s):`, ...r.problems.map((p) => `${p.kind} ${p.id}: ${p.detail}`)].join('\n') };
  });
}

export async function sandboxCommand(configFile: string, controlPort: number, gatewayUrl: string, databaseUrl: string, print: (line: string) => void): Promise<() => Promise<void>> {
  const loaded = loadConfigFile(configFile);
  if (!loaded.ok) throw new CliInputError(formatProblems(loaded));
  let running;
  try {
    running = await runSandboxes(loaded.config, { controlPort, gatewayUrl, databaseUrl: sandboxDatabaseUrl(databaseUrl) });
  } catch (err) {
    throw new CliInputError(`switchyard sandbox: ${(err as Error).message}`);
  }
  for (const s of running.sandboxes) print(`sandbox ${s.account} (${s.type}) listening on ${s.url}`);
  print(`state in ${maskDatabaseUrl(sandboxDatabaseUrl(databaseUrl))}`);
  print(`control API on http://127.0.0.1:${running.control.port}/_sandbox/{account}/…; webhooks go to ${gatewayUrl}/webhooks/{account}`);
  return () => running.close();
}
