// `switchyard webhooks redeliver`: send merchant events again — one event (to its endpoints, or
// one of them), or every delivery that gave up (--dead) in a window, with a progress bar. The
// deliveries go back to pending with an outbox row each; a running gateway's relay and workers
// send them, signed as always.

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { sql } from 'drizzle-orm';
import { parseDuration } from '../routing/duration.ts';
import { CliInputError } from './cli-input-error.ts';
import type { CommandContext } from './payment-commands.ts';
import type { DbOrTx } from '../store/db.ts';
import { withDb } from './cli-database.ts';

export interface RedeliverOptions {
  readonly eventId?: string;
  readonly endpoint?: string;
  readonly dead: boolean;
  readonly sinceMs: number;
  readonly json: boolean;
}

export async function redeliverCommand(databaseUrl: string, o: RedeliverOptions): Promise<string> {
  if (o.eventId === undefined && !o.dead) throw new CliInputError('give an event id (evt_...) or --dead to redeliver every delivery that gave up');
  if (o.eventId !== undefined && o.dead) throw new CliInputError('give an event id or --dead, not both');
  const { redeliverEvent } = await import('../webhooks/outbound/endpoint-store.ts');
  const { progressBar } = await import('../ops/progress.ts');
  const { cliOperator } = await import('../ops/operators.ts');
  const { recordAudit } = await import('../ops/audit.ts');
  const operator = cliOperator().name;
  return withDb(databaseUrl, async (db) => {
    const now = new Date();
    // One audit row per event queued again, in the transaction that queues it.
    const audit = (eventId: string) => async (tx: DbOrTx, deliveries: readonly string[]): Promise<void> => {
      await recordAudit(tx, { operator, action: 'webhook.redeliver', target: eventId, after: { deliveries, status: 'pending' }, note: o.dead ? 'dead deliveries redelivered' : null, at: now });
    };
    if (o.eventId !== undefined) {
      const owner = await db.execute<{ merchant_id: string }>(sql`SELECT merchant_id FROM merchant_events WHERE id = ${o.eventId}`);
      const merchantId = owner.rows[0]?.merchant_id;
      if (merchantId === undefined) throw new CliInputError(`no event ${o.eventId}`);
      const ids = (await redeliverEvent(db, merchantId, o.eventId, now, o.endpoint, audit(o.eventId))) ?? [];
      if (ids.length === 0) throw new CliInputError(`event ${o.eventId} has no delivery to an enabled endpoint${o.endpoint === undefined ? '' : ` ${o.endpoint}`}`);
      return o.json ? JSON.stringify({ event_id: o.eventId, deliveries: ids }) : `event ${o.eventId}: ${ids.length} delivery(ies) queued again (${ids.join(', ')}); a running gateway sends them`;
    }
    const since = new Date(now.getTime() - o.sinceMs).toISOString();
    const dead = await db.execute<{ event_id: string; merchant_id: string; endpoint_id: string }>(sql`
      SELECT d.event_id, d.merchant_id, d.endpoint_id FROM event_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
       WHERE d.status = 'dead' AND w.status = 'enabled' AND d.created_at >= ${since}::timestamptz
         AND (${o.endpoint ?? null}::text IS NULL OR d.endpoint_id = ${o.endpoint ?? null})
       ORDER BY d.created_at, d.id`);
    const bar = progressBar(dead.rows.length, 'redeliver');
    const queued: string[] = [];
    for (const d of dead.rows) {
      queued.push(...((await redeliverEvent(db, d.merchant_id, d.event_id, now, d.endpoint_id, audit(d.event_id))) ?? []));
      bar.tick(d.event_id);
    }
    bar.done();
    if (o.json) return JSON.stringify({ since, endpoint: o.endpoint ?? null, deliveries: queued });
    return queued.length === 0 ? `no dead deliveries since ${since}${o.endpoint === undefined ? '' : ` to ${o.endpoint}`}` : `${queued.length} dead delivery(ies) since ${since} queued again; a running gateway sends them`;
  });
}

export function registerWebhookCommands(program: Command, c: CommandContext): void {
  const webhooks = program.command('webhooks').description('merchant webhook deliveries');
  webhooks
    .command('redeliver')
    .description('send merchant events again: one event, or every delivery that gave up (--dead)')
    .argument('[event-id]', 'merchant event id (evt_...)')
    .option('--endpoint <id>', 'only this webhook endpoint (we_...)')
    .option('--dead', 'every dead delivery (retries exhausted) created within --since, to endpoints still enabled')
    .option('--since <duration>', 'with --dead: how far back (e.g. 24h, 7d)', (v: string) => {
      const ms = parseDuration(v);
      if (ms === null) throw new InvalidArgumentError(`--since "${v}" is not a duration such as 90m, 24h or 7d`);
      return ms;
    }, 7 * 86_400_000)
    .option('--json', 'one JSON line')
    .addHelpText('after', '\nExamples:\n  switchyard webhooks redeliver evt_01h...\n  switchyard webhooks redeliver --dead --since 24h --endpoint we_01h...')
    .action(c.action(async (eventId: string | undefined, o: { endpoint?: string; dead?: boolean; since: number; json?: boolean }) => {
      c.print(await redeliverCommand(c.settings().databaseUrl, {
        ...(eventId === undefined ? {} : { eventId }), ...(o.endpoint === undefined ? {} : { endpoint: o.endpoint }), dead: o.dead === true, sinceMs: o.since, json: o.json === true,
      }));
    }));
}
