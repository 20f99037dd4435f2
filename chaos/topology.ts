// What a chaos run stands up: a private Redis it can restart for real, the database (migrated),
// the two sandboxes in their own process (their ledgers outlive every gateway crash), the proxy in
// front of the API processes, and K API plus K worker processes — `switchyard start --role ...`,
// or the harness's planted-bug entry (chaos/planted-gateway.ts) when a bug is injected.

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrateDatabase } from '../src/cli/preflight.ts';
import { ensureSandboxTlsMaterial } from '../src/sandboxes/adyen/certificate.ts';
import { freePort, startPrivateRedis } from './private-redis.ts';
import type { PrivateRedis } from './private-redis.ts';
import { CLI, ManagedProcess } from './processes.ts';
import { startProxy } from './proxy.ts';
import type { Proxy } from './proxy.ts';
import { controlFetch } from './control-fetch.ts';
import { PLANT_POLL_MS } from './planted-switch.ts';

export const STRIPE_ACCOUNT = 'stripe_c';
export const ADYEN_ACCOUNT = 'adyen_c';
/**
 * The accounts key_expiry runs keep keys for seconds (KEY_EXPIRY_RETENTION_S), one per provider:
 * only the payments that fault aims at go there (`metadata.chaos_keys: short`), so the rest of the
 * run keeps each provider's own retention and measures the gateway, not the fault (issue 41 §6).
 */
export const STRIPE_SHORT_KEYS_ACCOUNT = 'stripe_k';
export const ADYEN_SHORT_KEYS_ACCOUNT = 'adyen_k';
export const SHORT_KEYS_ACCOUNTS = [STRIPE_SHORT_KEYS_ACCOUNT, ADYEN_SHORT_KEYS_ACCOUNT] as const;
/** The short-keys account of each main account (the key_expiry fault planned on one hits the other). */
export const SHORT_KEYS_ACCOUNT_OF: Readonly<Record<string, string>> = { [STRIPE_ACCOUNT]: STRIPE_SHORT_KEYS_ACCOUNT, [ADYEN_ACCOUNT]: ADYEN_SHORT_KEYS_ACCOUNT };
/** The metadata that routes a payment to the short-keys accounts. */
export const SHORT_KEYS_METADATA = { chaos_keys: 'short' } as const;
/** The accounts most faults are planned on. */
export const MAIN_ACCOUNTS = [STRIPE_ACCOUNT, ADYEN_ACCOUNT] as const;
/** Every account of the run (ledgers, fault resets). */
export const ACCOUNTS = [...MAIN_ACCOUNTS, ...SHORT_KEYS_ACCOUNTS] as const;
export const STRIPE_WEBHOOK_SECRET = 'whsec_chaos';
/**
 * How long a customer may take at an authentication page in a run (the accounts' authentication.timeout):
 * seconds, so the abandonment deadline passes inside a run on the gateway's real clock (never jumped:
 * that would also fire leases, deadlines and webhook tolerances). Long enough for a customer who
 * completes at once to do so through kills and outages.
 */
export const AUTHENTICATION_TIMEOUT_S = 15;

/**
 * The gateway processes' job retry budget in a run: 4 tries from 200 ms (about 1.4 s; production's
 * is about a minute), so a pg_outage_long of a few seconds outlasts it and a run stays short; and
 * the relay looks at a published row's job after 5 s (production: 30 s), so a row whose job failed
 * during an outage runs again within seconds of its end.
 */
export const CHAOS_JOB_RETRIES = { attempts: 4, backoffMs: 200, republishMs: 5_000 } as const;

/** BullMQ's key prefix in the gateway processes (`switchyard start` gives none: the runtime's default). */
export const GATEWAY_QUEUE_PREFIX = 'sy';

export interface TopologyOptions {
  readonly databaseUrl: string;
  /** API processes and worker processes, K of each. */
  readonly processes: number;
  readonly runDir: string;
  readonly clientTimeoutMs: number;
  /** How long the API waits for an outcome before answering 202. */
  readonly apiWaitMs: number;
  /**
   * One set of gateway processes for every run, the planted bug chosen per run through a file
   * (chaos/planted-switch.ts) rather than by restarting them; restarted only when a run's key
   * retention differs. For the planted-bug runs, where booting took most of each run.
   */
  readonly switchable?: boolean;
  /**
   * The accounts' authentication.timeout (default AUTHENTICATION_TIMEOUT_S). The planted-bug runs,
   * with no kills or outages to complete through, wait out their customers' deadlines sooner.
   */
  readonly authenticationTimeoutS?: number;
  /**
   * The vault as its own process (`switchyard start --role vault`, issue 44), the gateway's processes
   * using it through SWITCHYARD_VAULT_URL; the fault kill_vault kills it. Default: each gateway
   * process embeds the vault.
   */
  readonly vaultProcess?: boolean;
}

interface ConfigPorts {
  readonly stripePort: number;
  readonly adyenPort: number;
  readonly stripeShortPort: number;
  readonly adyenShortPort: number;
  readonly certDir: string;
  readonly timeoutMs: number;
  readonly authenticationTimeoutS: number;
}

/** `retentionS`: the short-keys accounts' declared key retention (key_expiry runs); null: each provider's own. */
function configYaml({ stripePort, adyenPort, stripeShortPort, adyenShortPort, certDir, timeoutMs, authenticationTimeoutS }: ConfigPorts, retentionS: number | null = null): string {
  const idempotency = retentionS === null ? '' : `\n    idempotency: { retention: "${retentionS}s" }`;
  const breaker = '{ error_threshold_pct: 50, volume_threshold: 5, reset_ms: 2000 }';
  const queue = '{ concurrency: 16, rate_per_s: 2000 }';
  const authentication = `{ timeout: "${authenticationTimeoutS}s" }`;
  const stripe = (name: string, port: number, key: string, extra = ''): string => `  ${name}:
    type: stripe
    endpoint: "http://127.0.0.1:${port}"
    secret_key: ${key}
    webhook_secrets: ["${STRIPE_WEBHOOK_SECRET}"]
    timeout_ms: ${timeoutMs}
    breaker: ${breaker}
    authentication: ${authentication}
    queue: ${queue}${extra}`;
  const adyen = (name: string, port: number, merchantAccount: string, extra = ''): string => `  ${name}:
    type: adyen
    endpoint: "https://127.0.0.1:${port}"
    api_key: AQE_chaos_${name}
    merchant_account: ${merchantAccount}
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: chaos, password: chaos }
    certificate_dir: "${certDir}"
    timeout_ms: ${timeoutMs}
    breaker: ${breaker}
    authentication: ${authentication}
    queue: ${queue}${extra}`;
  const short = `{ metadata: { chaos_keys: ${SHORT_KEYS_METADATA.chaos_keys} }`;
  return `# Written by the chaos harness for one run.
connectors:
${stripe(STRIPE_ACCOUNT, stripePort, 'sk_test_chaos')}
${adyen(ADYEN_ACCOUNT, adyenPort, 'ChaosECOM')}
${stripe(STRIPE_SHORT_KEYS_ACCOUNT, stripeShortPort, 'sk_test_chaos_keys', idempotency)}
${adyen(ADYEN_SHORT_KEYS_ACCOUNT, adyenShortPort, 'ChaosKeysECOM', idempotency)}
routing:
  rules:
    - name: short-keys-eur
      when: ${short}, currency: [EUR] }
      priority: [${ADYEN_SHORT_KEYS_ACCOUNT}, ${STRIPE_SHORT_KEYS_ACCOUNT}]
    - name: short-keys-mixed-currencies
      when: ${short}, currency: [JPY, KWD, CLP, ISK, IDR] }
      weighted: { ${ADYEN_SHORT_KEYS_ACCOUNT}: 50, ${STRIPE_SHORT_KEYS_ACCOUNT}: 50 }
    - name: short-keys
      when: ${short} }
      priority: [${STRIPE_SHORT_KEYS_ACCOUNT}, ${ADYEN_SHORT_KEYS_ACCOUNT}]
    - name: eur
      when: { currency: [EUR] }
      priority: [${ADYEN_ACCOUNT}, ${STRIPE_ACCOUNT}]
    - name: mixed-currencies
      when: { currency: [JPY, KWD, CLP, ISK, IDR] }
      weighted: { ${ADYEN_ACCOUNT}: 50, ${STRIPE_ACCOUNT}: 50 }
  default: { priority: [${STRIPE_ACCOUNT}, ${ADYEN_ACCOUNT}] }
  max_attempts: 3
declines:
  stripe:
    stolen_card: { class: hard }
    lost_card: { class: hard }
    processing_error: { class: soft, retry_elsewhere: true }
  adyen:
    "5": { class: hard }
    "4": { class: soft, retry_elsewhere: true }
`;
}

export type Role = 'api' | 'worker';

/** The vault process and what the gateway's processes need to reach it. */
export interface VaultProcess {
  readonly process: ManagedProcess;
  readonly env: Readonly<Record<string, string>>;
}

async function startVaultProcess(opts: TopologyOptions): Promise<VaultProcess> {
  const port = await freePort();
  const token = randomBytes(32).toString('base64url');
  const process_ = new ManagedProcess({
    name: 'vault',
    port,
    args: [CLI, 'start', '--role', 'vault', '--port', String(port)],
    env: {
      ...process.env, DATABASE_URL: opts.databaseUrl, SWITCHYARD_VAULT_TOKEN: token, SWITCHYARD_VAULT_PORT: String(port),
      // Its own keys: the gateway's processes never see them. Derived from the run's database, not
      // drawn: a later run on the same database (the quick pass's second seed) finds the vault's
      // records sealed under them, and a vault refuses to start on keys that cannot open its records.
      SWITCHYARD_VAULT_KEYS: `chaos:${createHash('sha256').update(`switchyard chaos vault key: ${opts.databaseUrl}`).digest('base64')}`,
    },
    logFile: join(opts.runDir, 'vault.log'),
    readyUrl: `http://127.0.0.1:${port}/v1/health`,
    readyHeaders: { authorization: `Bearer ${token}` },
  });
  await process_.start();
  return { process: process_, env: { SWITCHYARD_VAULT_URL: `http://127.0.0.1:${port}`, SWITCHYARD_VAULT_TOKEN: token } };
}

export class Topology {
  apis: ManagedProcess[] = [];
  workers: ManagedProcess[] = [];
  /** With opts.vaultProcess: the vault's own process. */
  vault: VaultProcess | null = null;
  private generation = 0;
  /** Switchable mode: the key retention the running processes were started with (undefined: none running). */
  private runningRetention: number | null | undefined = undefined;

  private constructor(
    readonly opts: TopologyOptions,
    readonly redis: PrivateRedis,
    readonly sandboxes: ManagedProcess,
    readonly controlUrl: string,
    readonly proxy: Proxy,
    readonly configFile: string,
    private readonly ports: ConfigPorts,
  ) {}

  /** The certificate authority of the Adyen sandbox's https listener (its pages, for the simulated customers). */
  sandboxCa(): string {
    return ensureSandboxTlsMaterial(this.ports.certDir).caPem;
  }

  static async boot(opts: TopologyOptions): Promise<Topology> {
    mkdirSync(opts.runDir, { recursive: true });
    await migrateDatabase(opts.databaseUrl);
    const redis = await startPrivateRedis();
    const cleanup: (() => Promise<void>)[] = [() => redis.stop()];
    try {
      const [stripePort, adyenPort, stripeShortPort, adyenShortPort, controlPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
      const configFile = join(opts.runDir, 'switchyard.yaml');
      const ports: ConfigPorts = {
        stripePort, adyenPort, stripeShortPort, adyenShortPort, certDir: join(opts.runDir, 'certs'), timeoutMs: opts.clientTimeoutMs, authenticationTimeoutS: opts.authenticationTimeoutS ?? AUTHENTICATION_TIMEOUT_S,
      };
      writeFileSync(configFile, configYaml(ports));
      let topology: Topology | null = null;
      const proxy = await startProxy(() => topology?.apis ?? []);
      cleanup.push(() => proxy.close());
      const controlUrl = `http://127.0.0.1:${controlPort}`;
      const sandboxes = new ManagedProcess({
        name: 'sandboxes',
        port: controlPort,
        args: [CLI, 'sandbox', '--control-port', String(controlPort), '--gateway-url', proxy.url],
        // The sandboxes' ledgers live in <run database>_sandbox: without the run's DATABASE_URL they
        // defaulted to switchyard_sandbox, shared by every run and gateway on the machine (another
        // run's sandbox process could hold the accounts' dispatch lease and send this run's webhooks away).
        env: { ...process.env, SWITCHYARD_CONFIG: configFile, DATABASE_URL: opts.databaseUrl },
        logFile: join(opts.runDir, 'sandboxes.log'),
        readyUrl: `${controlUrl}/_sandbox`,
      });
      cleanup.push(() => sandboxes.stop());
      await sandboxes.start();
      topology = new Topology(opts, redis, sandboxes, controlUrl, proxy, configFile, ports);
      if (opts.vaultProcess === true) {
        topology.vault = await startVaultProcess(opts);
        const vault = topology.vault.process;
        cleanup.push(() => vault.stop());
      }
      return topology;
    } catch (err) {
      for (const c of cleanup.reverse()) await c().catch(() => undefined);
      throw err;
    }
  }

  get url(): string {
    return this.proxy.url;
  }

  private async spec(role: Role, index: number, plant: string | null): Promise<ManagedProcess> {
    const port = await freePort();
    const gen = this.generation;
    const planted = ['--import', 'tsx', join('chaos', 'planted-gateway.ts')];
    const entry = this.opts.switchable === true ? [...planted, '--plant-file', this.plantFile] : plant === null ? [CLI, 'start'] : [...planted, '--plant', plant];
    return new ManagedProcess({
      name: `${role}-${index}`,
      port,
      args: [...entry, '--role', role, '--port', String(port)],
      env: {
        ...process.env,
        DATABASE_URL: this.opts.databaseUrl,
        REDIS_URL: this.redis.url,
        SWITCHYARD_CONFIG: this.configFile,
        SWITCHYARD_API_WAIT: `${this.opts.apiWaitMs}ms`,
        // The customers' browsers reach the gateway's authentication pages through the proxy.
        SWITCHYARD_PUBLIC_URL: this.proxy.url,
        SWITCHYARD_JOB_ATTEMPTS: String(CHAOS_JOB_RETRIES.attempts),
        SWITCHYARD_JOB_BACKOFF: `${CHAOS_JOB_RETRIES.backoffMs}ms`,
        SWITCHYARD_RELAY_REPUBLISH: `${CHAOS_JOB_RETRIES.republishMs}ms`,
        PORT: String(port),
        ...(this.vault?.env ?? {}),
      },
      logFile: join(this.opts.runDir, `${this.opts.switchable === true ? 'switchable' : plant ?? 'gateway'}-${gen}-${role}-${index}.log`),
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
  }

  /**
   * Starts K API and K worker processes (with a planted bug when named). `keyRetentionS`: the
   * short-keys accounts declare this key retention and their sandboxes keep keys this long
   * (key_expiry runs); null: each provider's own. The main accounts always keep the provider's own.
   */
  async startGateway(plant: string | null = null, keyRetentionS: number | null = null): Promise<void> {
    for (const account of ACCOUNTS) {
      const short = (SHORT_KEYS_ACCOUNTS as readonly string[]).includes(account);
      const res = await controlFetch(`${this.controlUrl}/_sandbox/${account}/idempotency`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key_ttl_s: short ? keyRetentionS : null }),
      });
      if (res.status !== 200) throw new Error(`sandbox ${account} key lifetime: ${res.status} ${await res.text()}`);
    }
    if (this.opts.switchable === true) {
      writeFileSync(this.plantFile, plant ?? '');
      if (this.runningRetention === keyRetentionS && (await this.down()).length === 0) {
        // Every process re-reads the file within PLANT_POLL_MS.
        await new Promise((r) => setTimeout(r, PLANT_POLL_MS * 3));
        return;
      }
      await this.stopGateway();
      this.runningRetention = keyRetentionS;
    }
    this.generation += 1;
    writeFileSync(this.configFile, configYaml(this.ports, keyRetentionS));
    const k = this.opts.processes;
    this.apis = await Promise.all(Array.from({ length: k }, (_, i) => this.spec('api', i, plant)));
    this.workers = await Promise.all(Array.from({ length: k }, (_, i) => this.spec('worker', i, plant)));
    // One at a time: each migrates on start, and two cores are slow to boot several at once.
    for (const p of [...this.workers, ...this.apis]) await p.start();
  }

  async stopGateway(): Promise<void> {
    await Promise.all([...this.apis, ...this.workers].map((p) => p.stop()));
    this.apis = [];
    this.workers = [];
    this.runningRetention = undefined;
  }

  /** After a run on a shared topology: switchable processes stay up with no bug; others stop. */
  async endRun(): Promise<void> {
    if (this.opts.switchable !== true) return this.stopGateway();
    writeFileSync(this.plantFile, '');
    await new Promise((r) => setTimeout(r, PLANT_POLL_MS * 3));
  }

  /** Switchable mode: the file naming the planted bug of the current run. */
  get plantFile(): string {
    return join(this.opts.runDir, 'plant');
  }

  /** Every gateway process is running (restarts after kills have finished); one that cannot be started is left for down() to report. */
  async allUp(log: (line: string) => void = () => undefined): Promise<void> {
    for (const p of [...(this.vault === null ? [] : [this.vault.process]), ...this.apis, ...this.workers]) {
      if (!p.alive) await p.start().catch((err: unknown) => log(`${p.spec.name}: ${(err as Error).message}`));
    }
  }

  /** Gateway processes not answering 200 on /readyz now. */
  async down(): Promise<string[]> {
    const all = [...(this.vault === null ? [] : [this.vault.process]), ...this.apis, ...this.workers];
    const ready = await Promise.all(all.map((p) => p.ready()));
    return all.filter((_, i) => !ready[i]).map((p) => p.spec.name);
  }

  /** Exits during start of this generation's processes (each was started again, as a supervisor would). */
  startFailures(): number {
    return [...this.apis, ...this.workers].reduce((n, p) => n + p.startFailures, 0);
  }

  async close(): Promise<void> {
    await this.stopGateway();
    await this.vault?.process.stop();
    await this.sandboxes.stop();
    await this.proxy.close();
    await this.redis.stop();
  }
}
