// Fires the planned faults as the driver's operation counter passes them, and records what was
// actually executed and when (the seed fixes the plan; process timing does not).

import pg from 'pg';
import type { FaultEvent, FaultKind, ProviderOp } from './plan.ts';
import type { Topology } from './topology.ts';

export interface ExecutedFault extends FaultEvent {
  /** Milliseconds since the run started. */
  readonly firedAtMs: number;
  readonly result: string;
}

type WebhookKnob = 'duplicate' | 'reorder' | 'delay_ms';

export class FaultInjector {
  readonly executed: ExecutedFault[] = [];
  private readonly background = new Set<Promise<unknown>>();
  private readonly windows: { account: string; knob: WebhookKnob; untilOp: number }[] = [];
  private cursor = 0;
  kills = 0;

  constructor(
    private readonly topology: Topology,
    private readonly faults: readonly FaultEvent[],
    private readonly databaseUrl: string,
    private readonly startedAt: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Called by the driver as operation `op` starts: fires every fault planned up to it. */
  onOperation(op: number): void {
    while (this.cursor < this.faults.length && this.faults[this.cursor]!.atOp <= op) {
      const f = this.faults[this.cursor++]!;
      this.track(this.fire(f).then(
        (result) => this.executed.push({ ...f, firedAtMs: Date.now() - this.startedAt, result }),
        (err: unknown) => {
          this.log(`fault ${f.kind} at op ${f.atOp} failed: ${(err as Error).message}`);
          this.executed.push({ ...f, firedAtMs: Date.now() - this.startedAt, result: `error: ${(err as Error).message}` });
        },
      ));
    }
    for (const w of this.windows.filter((x) => x.untilOp <= op)) {
      this.windows.splice(this.windows.indexOf(w), 1);
      if (!this.windows.some((x) => x.account === w.account && x.knob === w.knob)) this.track(this.webhooks(w.account, { [w.knob]: w.knob === 'reorder' ? false : 0 }));
    }
  }

  /** Fires what is left of the plan (a short workload may end before its last faults). */
  fireRemaining(): void {
    this.onOperation(Number.MAX_SAFE_INTEGER);
  }

  /** Ends every fault: waits for kills and restarts, ends outages, and puts webhooks back to normal. */
  async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    this.windows.length = 0;
    for (const account of await this.accounts()) {
      await this.control(`/_sandbox/${account}/outage`, { seconds: 0 });
      await this.webhooks(account, { enabled: true, duplicate: 0, reorder: false, delay_ms: 0 });
    }
    await this.topology.allUp(this.log);
  }

  countsByKind(): Record<FaultKind, number> {
    const counts = {} as Record<FaultKind, number>;
    for (const f of this.executed) counts[f.kind] = (counts[f.kind] ?? 0) + 1;
    return counts;
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  private async accounts(): Promise<string[]> {
    const res = await fetch(`${this.topology.controlUrl}/_sandbox`);
    const body = (await res.json()) as { sandboxes: { account: string }[] };
    return body.sandboxes.map((s) => s.account);
  }

  private async control(path: string, body: unknown): Promise<string> {
    const res = await fetch(`${this.topology.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`control ${path}: ${res.status} ${text}`);
    return text;
  }

  private webhooks(account: string, settings: Record<string, unknown>): Promise<string> {
    return this.control(`/_sandbox/${account}/webhooks`, settings);
  }

  private sandboxOp(account: string, op: ProviderOp): string {
    // Adyen has no create call: its authorize is the one that makes the payment.
    return account.startsWith('adyen') && op === 'create' ? 'authorize' : op;
  }

  private async fire(f: FaultEvent): Promise<string> {
    const account = f.account ?? '';
    switch (f.kind) {
      case 'error_503':
      case 'reset_before_processing':
      case 'accept_then_drop':
        return this.control(`/_sandbox/${account}/faults`, { op: this.sandboxOp(account, f.op ?? 'authorize'), mode: f.kind, count: f.count ?? 1 });
      case 'latency_before':
      case 'latency_after':
        return this.control(`/_sandbox/${account}/faults`, {
          op: this.sandboxOp(account, f.op ?? 'authorize'), mode: 'latency', count: f.count ?? 1, latency_ms: f.latencyMs ?? 3000,
          process: f.kind === 'latency_before' ? 'before' : 'after',
        });
      case 'release_failure':
        // Only requests whose key names a release (the gateway's …:release:<n>) meet it.
        return this.control(`/_sandbox/${account}/faults`, { op: 'release', mode: f.release === 'fail_later' ? 'release_fail_later' : 'release_refused', count: f.count ?? 1 });
      case 'late_reversal':
        return this.control(`/_sandbox/${account}/faults`, { op: f.op ?? 'refund', mode: `reverse_${f.order ?? 'after'}`, count: f.count ?? 1 });
      case 'outage': {
        const seconds = f.seconds ?? 1;
        const r = await this.control(`/_sandbox/${account}/outage`, { seconds });
        return r;
      }
      case 'webhook_duplicate':
      case 'webhook_reorder':
      case 'webhook_delay': {
        const knob: WebhookKnob = f.kind === 'webhook_duplicate' ? 'duplicate' : f.kind === 'webhook_reorder' ? 'reorder' : 'delay_ms';
        const value = knob === 'duplicate' ? 0.5 : knob === 'reorder' ? true : (f.latencyMs ?? 500);
        this.windows.push({ account, knob, untilOp: f.atOp + (f.windowOps ?? 20) });
        return this.webhooks(account, { [knob]: value });
      }
      case 'kill_api':
      case 'kill_worker': {
        const pool = f.kind === 'kill_api' ? this.topology.apis : this.topology.workers;
        if (pool.length === 0) return 'no process';
        const p = pool[(f.processIndex ?? 0) % pool.length]!;
        if (!p.alive) return `${p.spec.name} already down`;
        this.kills += 1;
        await p.kill();
        // Back after a short while, like a supervisor would restart it.
        await new Promise((r) => setTimeout(r, 300));
        await p.start();
        return `${p.spec.name} killed (-9) and restarted`;
      }
      case 'redis_restart':
        await this.topology.redis.restart();
        return 'redis-server killed (-9) and started again, empty';
      case 'pg_terminate': {
        const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'chaos-terminator' });
        await client.connect();
        try {
          const r = await client.query<{ n: string }>(
            // Not the harness's own connections (a concurrent terminator, the checks).
            "SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name NOT LIKE 'chaos-%'",
          );
          return `${r.rows[0]?.n ?? 0} backends terminated`;
        } finally {
          await client.end();
        }
      }
    }
  }
}
