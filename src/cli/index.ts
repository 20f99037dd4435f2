// `switchyard`: migrate, start, merchants, routes. Each command prints one clear line (or one
// JSON line) and exits non-zero on bad input or when a server it needs is unreachable.

// Commands load their modules when run, so `routes validate` does not load the whole gateway.

import { Command, InvalidArgumentError, Option } from 'commander';
import { redact } from '../api/log-redaction.ts';
import { safeErrorText } from '../observability/safe-error-text.ts';
import { maskDatabaseUrl } from '../store/database-url.ts';
import { CliInputError } from './cli-input-error.ts';
import { startFailureLine } from './start-retry.ts';
import type { ExplainInput } from './route-commands.ts';
import { parsePort, settingsFromEnv, SettingsError } from './settings.ts';
import { registerPaymentCommands } from './payment-commands.ts';
import { registerVaultCommands } from './vault-commands.ts';
import { registerWebhookCommands } from './webhook-commands.ts';

const print = (line: string): void => console.log(line);
const log = (line: string): void => console.error(redact(line));

/** Known failures become their one line; anything else its message, never a stack. */
function fail(err: unknown): never {
  const known = startFailureLine(err);
  const expected = err instanceof CliInputError || err instanceof SettingsError || ['ConfigError', 'OperatorIdentityError', 'VaultKeyError', 'VaultDatabaseError', 'VaultSettingsError'].includes((err as Error | null)?.name ?? '');
  console.error(known ?? (expected ? (err as Error).message : `switchyard: ${safeErrorText(err)}`));
  process.exit(1);
}

function action<A extends unknown[]>(run: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (err) {
      fail(err);
    }
  };
}

const program = new Command('switchyard')
  .description('Switchyard payment orchestration gateway')
  .showHelpAfterError('(run with --help for usage)');

program
  .command('migrate')
  .description('create the database in DATABASE_URL if missing and apply migrations')
  .action(action(async () => {
    const { databaseUrl } = settingsFromEnv();
    const { migrateDatabase } = await import('./preflight.ts');
    const r = await migrateDatabase(databaseUrl);
    print(`${maskDatabaseUrl(databaseUrl)}: ${r.created ? 'created, ' : ''}${r.applied.length === 0 ? 'up to date' : `applied ${r.applied.join(', ')}`}`);
  }));

program
  .command('start')
  .description('run the gateway: the API, the workers, or both (default); or the card vault alone (--role vault)')
  .addOption(new Option('--role <role>', 'which pieces to run (vault: the card vault as its own process, docs/vault.md)').choices(['api', 'worker', 'all', 'vault']).default('all'))
  .option('--port <port>', 'HTTP port (default PORT or 8080; workers listen for health only when given; the vault: SWITCHYARD_VAULT_PORT or 8089)', (v) => {
    try {
      return parsePort(v, '--port');
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  })
  .action(action(async (opts: { role: 'api' | 'worker' | 'all' | 'vault'; port?: number }) => {
    if (opts.role === 'vault') {
      const { startVaultRole, stopVaultOnSignals } = await import('./vault-role.ts');
      stopVaultOnSignals(await startVaultRole({ ...(opts.port === undefined ? {} : { port: opts.port }), print, log }), print);
      return;
    }
    const settings = settingsFromEnv();
    const { startGateway, stopOnSignals } = await import('./gateway.ts');
    const gateway = await startGateway({
      ...settings, role: opts.role, port: opts.port ?? settings.port, listen: opts.role !== 'worker' || opts.port !== undefined, print, log,
    });
    stopOnSignals(gateway, print);
  }));

const merchants = program.command('merchants').description('merchants and their API keys');
merchants
  .command('create')
  .description('create a merchant with a full secret key and a publishable key; prints {"id","name","api_key","publishable_key"} once (audited)')
  .requiredOption('--name <name>', 'merchant name')
  .option('--mode <mode>', 'the keys\' mode: test (default; sk_sy_test_…) or live (sk_sy_live_…)')
  .action(action(async (opts: { name: string; mode?: string }) => {
    const { createMerchantCommand } = await import('./merchant-commands.ts');
    print(await createMerchantCommand(settingsFromEnv().databaseUrl, opts.name, opts.mode));
  }));
merchants
  .command('rotate-key')
  .description('roll the merchant\'s one full secret key; the old one stops working at once (audited: SWITCHYARD_OPERATOR_TOKEN names you). With several full keys: merchants keys roll KEY_ID')
  .argument('<id>', 'merchant id (mer_...)')
  .action(action(async (id: string) => {
    const { rotateKeyCommand } = await import('./merchant-commands.ts');
    print(await rotateKeyCommand(settingsFromEnv().databaseUrl, id));
  }));
merchants
  .command('rotate-publishable-key')
  .description('replace a merchant publishable key (pk_sy_…); pages with the old one stop working at once (audited)')
  .argument('<id>', 'merchant id (mer_...)')
  .action(action(async (id: string) => {
    const { rotatePublishableKeyCommand } = await import('./merchant-commands.ts');
    print(await rotatePublishableKeyCommand(settingsFromEnv().databaseUrl, id));
  }));
merchants
  .command('set-origins')
  .description('set the browser origins that may call POST /v1/tokens and frame the hosted card form (https://host[:port], or http://localhost[:port]); replaces the list (audited)')
  .argument('<id>', 'merchant id (mer_...)')
  .argument('[origins...]', 'origins, e.g. https://shop.example.com')
  .option('--none', 'allow no origin (turns the hosted form and browser tokenization off)')
  .action(action(async (id: string, origins: string[], opts: { none?: boolean }) => {
    if (opts.none === true && origins.length > 0) throw new CliInputError('give origins or --none, not both');
    if (opts.none !== true && origins.length === 0) throw new CliInputError('give at least one origin (or --none to allow none)');
    const { setOriginsCommand } = await import('./merchant-commands.ts');
    print(await setOriginsCommand(settingsFromEnv().databaseUrl, id, origins));
  }));
merchants
  .command('set-version')
  .description('pin the merchant to an API version (answers without a Switchyard-Version header, and its webhook events, use it); --latest unpins it (audited)')
  .argument('<id>', 'merchant id (mer_...)')
  .argument('[version]', 'an API version, e.g. 2026-12-01 (docs/changelog.md)')
  .option('--latest', 'no pinned version: always the latest')
  .action(action(async (id: string, version: string | undefined, opts: { latest?: boolean }) => {
    if (opts.latest === true && version !== undefined) throw new CliInputError('give a version or --latest, not both');
    if (opts.latest !== true && version === undefined) throw new CliInputError('give a version (or --latest to unpin)');
    const { setVersionCommand } = await import('./merchant-commands.ts');
    print(await setVersionCommand(settingsFromEnv().databaseUrl, id, version ?? null));
  }));
merchants
  .command('allow-raw-cards')
  .description('let the merchant\'s servers send card numbers to POST /v1/payment_methods (they are then in PCI DSS scope for them); --revoke takes it back (audited)')
  .argument('<id>', 'merchant id (mer_...)')
  .option('--revoke', 'no longer allow it')
  .action(action(async (id: string, opts: { revoke?: boolean }) => {
    const { allowRawCardsCommand } = await import('./merchant-commands.ts');
    print(await allowRawCardsCommand(settingsFromEnv().databaseUrl, id, opts.revoke !== true));
  }));

const keys = merchants.command('keys').description('a merchant\'s API keys: list, create, roll, revoke (every change audited under SWITCHYARD_OPERATOR_TOKEN)');
keys
  .command('list')
  .description('the merchant\'s working keys (never their secrets); --all: deleted and expired ones too')
  .argument('<merchant>', 'merchant id (mer_...)')
  .option('--all', 'include deleted and expired keys')
  .action(action(async (merchant: string, opts: { all?: boolean }) => {
    const { listKeysCommand } = await import('./key-commands.ts');
    print(await listKeysCommand(settingsFromEnv().databaseUrl, merchant, opts));
  }));
keys
  .command('create')
  .description('a new key; prints it with its secret once')
  .argument('<merchant>', 'merchant id (mer_...)')
  .requiredOption('--mode <mode>', 'test or live')
  .requiredOption('--name <name>', 'a name to tell keys apart (1-100 characters)')
  .option('--role <role>', 'a secret key\'s role: full, payments, refunds or read_only')
  .option('--publishable', 'a publishable key (pk_sy_…) instead of a secret key')
  .option('--expires-at <time>', 'when it stops working (ISO 8601)')
  .action(action(async (merchant: string, opts: { mode: string; name: string; role?: string; publishable?: boolean; expiresAt?: string }) => {
    const { createKeyCommand } = await import('./key-commands.ts');
    print(await createKeyCommand(settingsFromEnv().databaseUrl, merchant, opts));
  }));
keys
  .command('roll')
  .description('a new secret for a key (same role, mode and name); the old one keeps working --expires-in seconds (0 to 604800)')
  .argument('<key>', 'key id (key_...)')
  .requiredOption('--expires-in <seconds>', 'how long the old key keeps working')
  .option('--mode <mode>', 'only for a legacy key (mode any): the new key\'s mode, test or live')
  .action(action(async (key: string, opts: { expiresIn: string; mode?: string }) => {
    const { rollKeyCommand } = await import('./key-commands.ts');
    print(await rollKeyCommand(settingsFromEnv().databaseUrl, key, opts));
  }));
keys
  .command('revoke')
  .description('delete a key: it answers 401 from now on (never the merchant\'s last working full key of a mode)')
  .argument('<key>', 'key id (key_...)')
  .action(action(async (key: string) => {
    const { revokeKeyCommand } = await import('./key-commands.ts');
    print(await revokeKeyCommand(settingsFromEnv().databaseUrl, key));
  }));

const routes = program.command('routes').description('routing configuration');
routes
  .command('validate')
  .description('validate a config file (default SWITCHYARD_CONFIG or config/switchyard.yaml)')
  .argument('[file]', 'config file')
  .option('--strict', 'exit 1 on warnings too (a rule never reached, an empty amount range, a currency no candidate takes, a decline code no connector produces)')
  .action(action(async (file: string | undefined, opts: { strict?: boolean }) => {
    const { validateRoutesCommand } = await import('./route-commands.ts');
    const r = validateRoutesCommand(file ?? settingsFromEnv().configFile, process.env, { strict: opts.strict === true });
    if (!r.ok) throw new CliInputError(r.text);
    for (const w of r.warnings) console.error(w);
    print(r.text);
  }));
routes
  .command('explain')
  .description('explain where a payment would be routed (exit 1 when it would be refused)')
  .requiredOption('--amount <minor units>', 'amount in minor units')
  .requiredOption('--currency <code>', 'ISO 4217 currency (upper case)')
  .option('--country <code>', 'card country')
  .option('--brand <brand>', 'card brand')
  .option('--merchant <id>', 'merchant id')
  .option('--metadata <key=value>', 'payment metadata, once per key (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
  .option('--payment-id <id>', 'payment id: shows the weighted draw for this payment (without it, the weights)')
  .option('--test-card <number>', 'explain for a sandbox test card instead of tokens')
  .option('--mode <test|live>', "explain for a key of this mode (it reaches only accounts of its mode); without it, a legacy key's (every account)")
  .option('--config <file>', 'config file (default SWITCHYARD_CONFIG or config/switchyard.yaml)')
  .option('--json', 'one JSON line')
  .action(action(async (opts: ExplainInput & { config?: string }) => {
    const { explainRouteCommand } = await import('./route-commands.ts');
    const r = explainRouteCommand(opts.config ?? settingsFromEnv().configFile, opts);
    print(r.text);
    // A refusal is an answer, printed whole, and a failure for scripts.
    if (!r.ok) process.exitCode = 1;
  }));

const dlq = program.command('dlq').description('dead letters: outbox rows whose jobs exhausted their retries');
dlq
  .command('list')
  .description('list dead letters, oldest first')
  .option('--json', 'one JSON line')
  .action(action(async (opts: { json?: boolean }) => {
    const { dlqListCommand } = await import('./ops-commands.ts');
    print(await dlqListCommand(settingsFromEnv().databaseUrl, opts.json === true));
  }));
dlq
  .command('replay')
  .description('put a dead letter back through the same checks as any job (audited: SWITCHYARD_OPERATOR_TOKEN names you)')
  .argument('<id>', 'dead letter id (from dlq list)')
  .option('--queue-prefix <prefix>', 'BullMQ key prefix of the gateway', 'sy')
  .action(action(async (id: string, opts: { queuePrefix: string }) => {
    const { dlqReplayCommand } = await import('./ops-commands.ts');
    const s = settingsFromEnv();
    print(await dlqReplayCommand(s.databaseUrl, s.redisUrl, opts.queuePrefix, id, s.configFile));
  }));

program
  .command('ledger')
  .description('ledger tools')
  .command('check')
  .description('every ledger transaction balances; every payment agrees with its books; no attempt settled beyond its booked capture; no money held for release past the bound')
  .option('--held-bound <duration>', 'how long money may stay held for a release (90m, 72h, 7d); default 72h')
  .option('--json', 'one JSON line')
  .action(action(async (opts: { json?: boolean; heldBound?: string }) => {
    const { ledgerCheckCommand } = await import('./ops-commands.ts');
    const { parseDuration } = await import('../routing/duration.ts');
    const bound = opts.heldBound === undefined ? undefined : parseDuration(opts.heldBound);
    if (bound === null) throw new CliInputError(`--held-bound "${opts.heldBound}" is not a duration such as 90m, 72h or 7d`);
    const r = await ledgerCheckCommand(settingsFromEnv().databaseUrl, opts.json === true, bound);
    if (!r.ok) throw new CliInputError(r.text);
    print(r.text);
  }));

program
  .command('reconcile')
  .description("compare the providers' records for a window with ours; apply safe fixes, record the rest")
  .option('--since <duration>', 'window length back from now (90m, 24h, 7d)', '24h')
  .option('--connector <name>', 'only this connector account')
  .option('--json', 'one JSON line')
  .action(action(async (opts: { since: string; connector?: string; json?: boolean }) => {
    const { reconcileCommand } = await import('./reconcile-command.ts');
    await reconcileCommand(settingsFromEnv(), { since: opts.since, json: opts.json === true, ...(opts.connector === undefined ? {} : { connector: opts.connector }) }, print, log);
  }));

const discrepancies = program.command('discrepancies').description('what reconciliation and the state machine found, for operators');
discrepancies
  .command('list')
  .description('list discrepancies, newest first')
  .option('--status <status>', 'open, resolved or all', 'open')
  .option('--category <category>', 'missed_notification, unapplied_event, provider_side_change, no_counterpart or amount_mismatch')
  .option('--limit <n>', 'at most this many rows', '100')
  .option('--json', 'one JSON line')
  .action(action(async (opts: { status: string; category?: string; limit: string; json?: boolean }) => {
    const { discrepanciesListCommand } = await import('./discrepancy-commands.ts');
    print(await discrepanciesListCommand(settingsFromEnv().databaseUrl, opts));
  }));
discrepancies
  .command('resolve')
  .description('resolve an open discrepancy with a note saying what was done')
  .argument('<id>', 'discrepancy id (dsc_...)')
  .requiredOption('--note <text>', 'what was done about it')
  .option('--reason <reason>', 'for a late approval or failed release the provider has not confirmed released: returned_outside_switchyard, confirmed_with_provider, customer_refunded_otherwise, written_off or duplicate_finding')
  .addHelpText('after', '\nRecorded in the audit trail under the operator whose token SWITCHYARD_OPERATOR_TOKEN holds.')
  .action(action(async (id: string, opts: { note: string; reason?: string }) => {
    const { discrepanciesResolveCommand } = await import('./discrepancy-commands.ts');
    print(await discrepanciesResolveCommand(settingsFromEnv().databaseUrl, id, opts));
  }));

program
  .command('sandbox')
  .description('run the provider sandboxes alone, on the loopback URLs the config names as endpoints')
  .option('--control-port <port>', 'control API port', (v) => {
    try {
      return parsePort(v, '--control-port');
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  }, 4010)
  .option('--gateway-url <url>', 'where sandboxes send webhooks (default http://127.0.0.1:$PORT)')
  .action(action(async (opts: { controlPort: number; gatewayUrl?: string }) => {
    const s = settingsFromEnv();
    const { sandboxCommand } = await import('./ops-commands.ts');
    const close = await sandboxCommand(s.configFile, opts.controlPort, opts.gatewayUrl ?? `http://127.0.0.1:${s.port}`, s.databaseUrl, print);
    const stop = (): void => {
      void close().then(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }));

program
  .command('audit')
  .description('the operator audit trail')
  .command('list')
  .description('operator actions, newest first')
  .option('--since <duration>', 'only the last 90m, 24h, 7d ...')
  .option('--operator <name>', 'only this operator')
  .option('--target <id>', 'only this target (a payment, discrepancy, outbox:<id>, event, merchant); a trailing * matches a prefix')
  .option('--limit <n>', 'at most this many rows', '200')
  .option('--json', 'one JSON line')
  .action(action(async (opts: { since?: string; operator?: string; target?: string; limit: string; json?: boolean }) => {
    const { auditListCommand } = await import('./audit-commands.ts');
    print(await auditListCommand(settingsFromEnv().databaseUrl, opts));
  }));

registerPaymentCommands(program, { action, print, log, settings: () => settingsFromEnv() });
registerWebhookCommands(program, { action, print, log, settings: () => settingsFromEnv() });
registerVaultCommands(program, { action, print, log, settings: () => settingsFromEnv() });

await program.parseAsync(process.argv);
