// The vaulted card for one authorization send: revealed by the vault (which logs the access) just
// before the provider call, and its code destroyed at the first authorization response
// (PCI DSS 3.3.1.2). The card lives in memory for that one call; rows, jobs and history name only
// the payment method id.

import type { ConnectorCard } from '../connectors/contract.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Vault } from '../vault/vault.ts';

export interface CardVaultDeps {
  readonly vault: Pick<Vault, 'reveal' | 'forgetCode'>;
  /** role@host:pid, named in the vault's access log. */
  readonly process: string;
  readonly log: (line: string) => void;
  /** Test seam (the chaos harness plants a bug here): the card, as the worker is about to send it for this outbox row. */
  readonly sent?: (outboxId: number, card: ConnectorCard) => Promise<void>;
}

export type CardForSend =
  | { readonly kind: 'card'; readonly card: ConnectorCard }
  /** Not sent: the answer the core gets instead. */
  | { readonly kind: 'not_sent'; readonly outcome: CallOutcome };

/**
 * The card for this send of the attempt's request `requestKey`. A resend carries exactly the card
 * fields of the first send: when that one carried the code and the vault has since destroyed it,
 * the request is not sent again (unknown{card_code_gone}: the core queries and fences instead).
 */
export async function cardForSend(deps: CardVaultDeps | undefined, paymentMethodId: string, attemptId: string, requestKey: string): Promise<CardForSend> {
  // A process without the vault cannot send this payment: thrown, so the job is retried (and dead-lettered, visibly, if it never gets one).
  if (deps === undefined) throw new Error(`payment method ${paymentMethodId}: this process has no vault`);
  const revealed = await deps.vault.reveal(paymentMethodId, { purpose: 'provider_call', attemptId, process: deps.process, requestKey });
  if (revealed === null) {
    return { kind: 'not_sent', outcome: { kind: 'not_sent', reason: 'local_validation', detail: `payment method ${paymentMethodId} is not in the vault` } };
  }
  if (revealed.firstRevealHadCode === true && revealed.cvc === null) {
    return {
      kind: 'not_sent',
      outcome: { kind: 'unknown', reason: 'card_code_gone', detail: `the card code first sent with this request is destroyed (${paymentMethodId}); resolved by query, never resent without it` },
    };
  }
  return {
    kind: 'card',
    card: { paymentMethodId, number: revealed.number, expMonth: revealed.expMonth, expYear: revealed.expYear, cvc: revealed.cvc, holderName: revealed.holderName },
  };
}

/** The issuer has answered for this card (approval, decline or challenge): its code is not kept a moment longer. */
export function isAuthorizationResponse(o: CallOutcome): boolean {
  return o.kind === 'succeeded' || o.kind === 'declined' || o.kind === 'action_required';
}

export async function forgetCodeAfterResponse(deps: CardVaultDeps | undefined, paymentMethodId: string, o: CallOutcome): Promise<void> {
  if (deps === undefined || !isAuthorizationResponse(o)) return;
  try {
    await deps.vault.forgetCode(paymentMethodId);
  } catch (err) {
    // The vault's sweep destroys it within the hour anyway; a failover before then may carry it.
    deps.log(`vault: card code of ${paymentMethodId} not destroyed after the authorization response (${(err as Error).name}); the hourly sweep will`);
  }
}
