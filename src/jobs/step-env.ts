// Builds the StepEnv a transition needs, from data loaded before deciding: connector policies,
// the breakers' states now, and the routing snapshot the payment was routed with.

import { DEFAULT_CORE_POLICY } from '../core/policy.ts';
import type { ConnectorPolicy, CorePolicy } from '../core/policy.ts';
import { newId } from '../core/ids.ts';
import type { StepEnv } from '../core/step.ts';
import type { Connector } from '../connectors/contract.ts';
import type { ConnectorBreakers } from '../routing/breakers.ts';
import type { DbOrTx } from '../store/db.ts';
import type { RoutingSnapshotStore } from '../store/routing-snapshots.ts';
import type { TransitionEnv, TransitionSeams } from '../store/transition.ts';

export interface StepEnvDeps {
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly breakers: ConnectorBreakers;
  readonly snapshots: RoutingSnapshotStore;
  readonly core?: CorePolicy;
  readonly defaultMaxAttempts?: number;
  /** Planted-bug seams for the chaos harness; production passes none. */
  readonly seams?: TransitionSeams;
  /** The accounts routing treats as open (this process's breakers combined with the fleet's); default: this process's own. */
  readonly openBreakers?: () => ReadonlySet<string>;
}

export class StepEnvFactory {
  readonly core: CorePolicy;
  private readonly policies: Readonly<Record<string, ConnectorPolicy>>;

  constructor(private readonly deps: StepEnvDeps) {
    this.core = deps.core ?? DEFAULT_CORE_POLICY;
    const policies: Record<string, ConnectorPolicy> = {};
    for (const [name, c] of deps.connectors) policies[name] = c.policy;
    this.policies = policies;
  }

  /** For a new payment routed by the current snapshot. */
  current(maxAttempts: number): TransitionEnv {
    const env: StepEnv = {
      policies: this.policies, openBreakers: new Set(this.deps.openBreakers?.() ?? this.deps.breakers.openAccounts()), breakerResetMs: this.deps.breakers.resetTimes(),
      core: this.core, maxAttempts, newId: (k) => newId(k),
    };
    return this.deps.seams === undefined ? env : { ...env, seams: this.deps.seams };
  }

  /** For an existing payment: max attempts come from the snapshot it was routed with. */
  async forSnapshot(db: DbOrTx, version: string): Promise<TransitionEnv> {
    const snapshot = await this.deps.snapshots.load(db, version);
    return this.current(snapshot?.maxAttempts ?? this.deps.defaultMaxAttempts ?? 3);
  }
}
