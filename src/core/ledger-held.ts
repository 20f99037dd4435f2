// Money held for a release (issue 29). Under automatic capture an approval we do not keep (a late
// approval after failover, a partial one without opt-in) captured the customer's money at the
// provider: the connector owes it to us, and we owe it back to the customer — not the merchant.
// It is booked when the provider confirms the approval (receivable / held_for_release) and moved
// out when the provider confirms the release refund (held_for_release / receivable). A release
// refund reversed after success books it again. Kept apart from the merchant's postings.

/** A ledger line as core/ledger.ts has it (declared here so the two files do not import each other). */
interface HeldLine {
  readonly account: string;
  readonly direction: 'debit' | 'credit';
  readonly amount: number;
  readonly currency: string;
}

const held = (connector: string): string => `connector:${connector}:held_for_release`;
const receivable = (connector: string): string => `connector:${connector}:receivable`;

export function heldPosting<K extends 'held_for_release' | 'release_refunded'>(kind: K, connector: string, amount: number, currency: string): { kind: K; lines: HeldLine[] } {
  const [debit, credit] = kind === 'held_for_release' ? [receivable(connector), held(connector)] : [held(connector), receivable(connector)];
  const lines: HeldLine[] = [
    { account: debit, direction: 'debit', amount, currency },
    { account: credit, direction: 'credit', amount, currency },
  ];
  return { kind, lines };
}
