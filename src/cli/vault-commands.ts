// `switchyard vault rotate|check|access-log`: re-seal every stored card under the first key of
// SWITCHYARD_VAULT_KEYS (resumable: run it again after a stop), prove every record opens under its
// own context and matches its fingerprint, and read the vault's access log. Each opens the vault as
// the gateway does, so a key set that cannot open the records is refused the same way.

import { hostname } from 'node:os';
import type { Command } from 'commander';
import { parseDuration } from '../routing/duration.ts';
import { CliInputError } from './cli-input-error.ts';
import type { CommandContext } from './payment-commands.ts';
import type { OpenedVault } from '../vault/index.ts';
import type { RecordProblem } from '../vault/maintenance.ts';

async function withVault<T>(databaseUrl: string, log: (line: string) => void, run: (vault: OpenedVault) => Promise<T>): Promise<T> {
  const { openVault } = await import('../vault/index.ts');
  const vault = await openVault({ gatewayDatabaseUrl: databaseUrl, sweepEveryMs: 0, poolMax: 2, log });
  try {
    return await run(vault);
  } finally {
    await vault.close();
  }
}

const processName = (command: string): string => `cli:vault-${command}@${hostname()}:${process.pid}`;
const problemLine = (p: RecordProblem): string => `${p.id}\t${p.problem}\t${p.detail}`;

function positiveInt(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliInputError(`${name} "${value}" is not a whole number from 1 to ${max}`);
  return n;
}

export function registerVaultCommands(program: Command, c: CommandContext): void {
  const vault = program.command('vault').description('the card vault: key rotation, integrity check, access log');

  vault
    .command('rotate')
    .description('re-encrypt every stored card under the first key of SWITCHYARD_VAULT_KEYS (resumable; keep the old keys listed until it reports none left)')
    .option('--batch-size <n>', 'records per committed batch', '200')
    .option('--json', 'one JSON line')
    .action(c.action(async (opts: { batchSize: string; json?: boolean }) => {
      const batchSize = positiveInt(opts.batchSize, '--batch-size', 200, 10_000);
      const { rotateVault } = await import('../vault/maintenance.ts');
      const r = await withVault(c.settings().databaseUrl, c.log, (v) => rotateVault(v.parts, { process: processName('rotate'), batchSize, onProgress: c.log }));
      if (opts.json === true) c.print(JSON.stringify({ to_key: r.toKey, rotated: r.rotated, code_keys_rotated: r.codeKeysRotated, failed: r.failed }));
      else c.print(`rotated ${r.rotated} card record(s) and ${r.codeKeysRotated} code key(s) to key "${r.toKey}"`);
      if (r.failed.length > 0) throw new CliInputError([`${r.failed.length} record(s) could not be opened and stay under their old key (run switchyard vault check):`, ...r.failed.map(problemLine)].join('\n'));
    }));

  vault
    .command('check')
    .description('prove every stored record decrypts, carries its own encryption context, and matches its fingerprint and last 4')
    .option('--json', 'one JSON line')
    .action(c.action(async (opts: { json?: boolean }) => {
      const { checkVault } = await import('../vault/maintenance.ts');
      const r = await withVault(c.settings().databaseUrl, c.log, (v) => checkVault(v.parts, { process: processName('check'), onProgress: c.log }));
      if (opts.json === true) c.print(JSON.stringify({ ok: r.problems.length === 0, checked: r.checked, codes_checked: r.codesChecked, problems: r.problems }));
      if (r.problems.length > 0) throw new CliInputError([`vault check failed: ${r.problems.length} problem(s) in ${r.checked} card record(s)`, ...r.problems.map(problemLine)].join('\n'));
      if (opts.json !== true) c.print(`vault ok: ${r.checked} card record(s) and ${r.codesChecked} card code(s) open under their own context and match their fingerprints`);
    }));

  vault
    .command('access-log')
    .description('every decrypt of a stored card (who, for what), newest first')
    .option('--payment-method <id>', 'only this payment method (pmd_...)')
    .option('--since <duration>', 'only the last 90m, 24h, 7d ...')
    .option('--limit <n>', 'at most this many rows', '200')
    .option('--json', 'one JSON line')
    .action(c.action(async (opts: { paymentMethod?: string; since?: string; limit: string; json?: boolean }) => {
      const limit = positiveInt(opts.limit, '--limit', 200, 10_000);
      const sinceMs = opts.since === undefined ? null : parseDuration(opts.since);
      if (opts.since !== undefined && sinceMs === null) throw new CliInputError(`--since "${opts.since}" is not a duration such as 90m, 24h or 7d`);
      const { listAccessLog } = await import('../vault/maintenance.ts');
      const rows = await withVault(c.settings().databaseUrl, c.log, (v) => listAccessLog(v.parts.pool, {
        limit, ...(opts.paymentMethod === undefined ? {} : { paymentMethodId: opts.paymentMethod }), ...(sinceMs === null ? {} : { since: new Date(Date.now() - sinceMs) }),
      }));
      if (opts.json === true) {
        c.print(JSON.stringify({ access_log: rows.map((r) => ({ id: r.id, payment_method: r.paymentMethodId, purpose: r.purpose, attempt_id: r.attemptId, process: r.process, fields: r.fields, at: r.at.toISOString() })) }));
        return;
      }
      if (rows.length === 0) {
        c.print('no vault access recorded for this filter');
        return;
      }
      c.print([`${rows.length} vault access(es), newest first`, ...rows.map((r) => [r.at.toISOString(), r.paymentMethodId, r.purpose, r.attemptId ?? '-', r.fields.join('+'), r.process].join('\t'))].join('\n'));
    }));
}
