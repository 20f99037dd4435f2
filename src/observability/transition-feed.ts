// Every committed transition, announced once per process after COMMIT. transition() and
// createPayment() are called from many places (API, workers, webhooks, reconcile, recovery); this
// feed lets the runtime count and log them without threading an observer through each caller.
// A leaf module: it imports nothing, so the store can use it without a cycle.

export interface TransitionEvent {
  readonly paymentId: string;
  readonly merchantId: string;
  /** The connector account of the payment's latest attempt (null before it has one). */
  readonly connector: string | null;
  readonly origin: string;
  readonly kind: 'applied' | 'noop' | 'illegal';
  readonly from: string;
  readonly to: string;
  /** The illegal code or 'noop' for ignored inputs. */
  readonly code: string | null;
  readonly reason: string;
  readonly transitionId: number;
}

/** The parts of a transition result this feed reads (structural, so the store's types stay its own). */
export interface CommittedTransition {
  readonly kind: 'applied' | 'noop' | 'illegal';
  readonly payment: { readonly id: string; readonly merchantId: string; readonly state: string; readonly attempts: readonly { readonly no: number; readonly connector: string }[] };
  readonly transitionId: number;
  readonly from?: string;
  readonly to?: string;
  readonly code?: string;
  readonly reason?: string;
  readonly note?: string;
}

type Listener = (e: TransitionEvent) => void;
const listeners = new Set<Listener>();

/** Subscribes; returns the unsubscribe function. */
export function onTransition(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

function latestConnector(attempts: CommittedTransition['payment']['attempts']): string | null {
  let latest: { no: number; connector: string } | null = null;
  for (const a of attempts) if (latest === null || a.no > latest.no) latest = a;
  return latest?.connector ?? null;
}

/** Called by the store after COMMIT. A listener that throws never fails the transition. */
export function announceTransition(r: CommittedTransition, origin: string): void {
  if (listeners.size === 0) return;
  const e: TransitionEvent = {
    paymentId: r.payment.id,
    merchantId: r.payment.merchantId,
    connector: latestConnector(r.payment.attempts),
    origin,
    kind: r.kind,
    from: r.from ?? r.payment.state,
    to: r.to ?? r.payment.state,
    code: r.kind === 'applied' ? null : (r.code ?? 'noop'),
    reason: r.note ?? r.reason ?? '',
    transitionId: r.transitionId,
  };
  for (const l of listeners) {
    try {
      l(e);
    } catch {
      // Observability must never break a committed transition.
    }
  }
}

/** A new payment's first transition (created -> authorizing, or failed when nothing can take it). */
export function announceCreated(r: { readonly payment: CommittedTransition['payment']; readonly transitionId: number }, origin: string): void {
  announceTransition({ kind: 'applied', payment: r.payment, transitionId: r.transitionId, from: 'created', to: r.payment.state, note: 'created and submitted' }, origin);
}
