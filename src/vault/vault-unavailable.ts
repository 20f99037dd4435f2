// What a caller of the vault process (SWITCHYARD_VAULT_URL) sees when the call did not give an
// answer: no card was stored, described or revealed for it. The API answers 503 and the merchant
// retries; a worker's job fails before its provider call is sent and is run again.

export type VaultUnavailableReason =
  /** Nothing answered (connection refused or reset, name not found). */
  | 'unreachable'
  /** No answer within the client's timeout. */
  | 'timeout'
  /** The vault answered 503: its database does not answer. */
  | 'vault_down'
  /** The vault answered 500: it failed on this request (a record it refuses to open, a bug). */
  | 'vault_failure'
  /** The vault refused SWITCHYARD_VAULT_TOKEN (401): configuration, which waiting does not fix. */
  | 'token_refused'
  /** The vault refused the request (400, 404, 413) or answered something that is not its protocol: a version mismatch or a bug. */
  | 'protocol';

const HEALS_BY_WAITING: ReadonlySet<VaultUnavailableReason> = new Set(['unreachable', 'timeout', 'vault_down']);

export class VaultUnavailableError extends Error {
  override readonly name = 'VaultUnavailableError';
  /**
   * Read by src/store/connection-loss.ts (duck-typed, so the store does not import the vault): a
   * vault that is down is an outage like PostgreSQL's, its jobs are run again once it is back
   * and a start waits for it; a refused token or a protocol mismatch is not.
   */
  readonly connectionLoss: boolean;

  constructor(readonly reason: VaultUnavailableReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.connectionLoss = HEALS_BY_WAITING.has(reason);
  }
}
