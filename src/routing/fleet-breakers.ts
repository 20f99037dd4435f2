// Which connector accounts count as open for routing, combining this process's breaker with the
// fleet's. With dispatch at commit every process calls providers, so every process's breaker sees
// failures, but each sees only its own calls: a process that has not called an account lately
// would keep routing to a provider the rest of the fleet has found down. Rule: an account is open
// when this process's breaker is open, or when at least half of the processes that called it
// within its breaker window see it open (one process: its own state; two: either).
//
// Pure: the board's entries in, a set out (src/observability/breaker-board.ts reads and writes them).

export interface BoardEntry {
  readonly account: string;
  readonly process: string;
  readonly state: string;
  /** When the entry was written (ms). */
  readonly at: number;
  /** When that process last called the account through its breaker (ms; 0: never). */
  readonly lastCallAt: number;
}

export interface FleetView {
  readonly now: number;
  /** Entries older than this are from processes that stopped writing. */
  readonly freshMs: number;
  /** Each account's breaker rolling window: who called within it has a say. */
  readonly windowMs: (account: string) => number;
}

/**
 * This process's entries as its breakers are now, not as last published: a breaker that went
 * half-open (opossum's reset timer) since the last tick must not be counted open by its own
 * process's stale entry, or the probe that would close it is never routed.
 */
export function withOwnStates(entries: readonly BoardEntry[], self: string, states: Readonly<Record<string, string>>): BoardEntry[] {
  return entries.map((e) => (e.process === self && Object.hasOwn(states, e.account) ? { ...e, state: states[e.account]! } : e));
}

export function fleetOpenAccounts(entries: readonly BoardEntry[], ownOpen: ReadonlySet<string>, v: FleetView): Set<string> {
  const open = new Set(ownOpen);
  const byAccount = new Map<string, { callers: number; open: number }>();
  for (const e of entries) {
    if (v.now - e.at > v.freshMs) continue;
    if (e.lastCallAt <= 0 || v.now - e.lastCallAt > v.windowMs(e.account)) continue;
    const c = byAccount.get(e.account) ?? { callers: 0, open: 0 };
    c.callers += 1;
    if (e.state === 'open') c.open += 1;
    byAccount.set(e.account, c);
  }
  for (const [account, c] of byAccount) if (c.open > 0 && c.open * 2 >= c.callers) open.add(account);
  return open;
}
