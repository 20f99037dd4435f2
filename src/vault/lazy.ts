// The vault as a gateway process holds it: opened on first use (the encryption SDK and the vault's
// database cost a start only to processes that touch cards), closed with the process.

import type { Vault } from './vault.ts';

export interface ProcessVault extends Vault {
  /** Closes what the first use opened; a no-op when nothing was. */
  close(): Promise<void>;
}

export function lazyVault(open: () => Promise<Vault & { close(): Promise<void> }>): ProcessVault {
  let opening: Promise<Vault & { close(): Promise<void> }> | null = null;
  const opened = (): Promise<Vault & { close(): Promise<void> }> => {
    // A failed open (database down) is not remembered: the next use tries again.
    opening ??= open().catch((err: unknown) => {
      opening = null;
      throw err;
    });
    return opening;
  };
  return {
    tokenize: async (merchantId, card) => (await opened()).tokenize(merchantId, card),
    describe: async (merchantId, id) => (await opened()).describe(merchantId, id),
    reveal: async (id, access) => (await opened()).reveal(id, access),
    forgetCode: async (id) => (await opened()).forgetCode(id),
    sweepCodes: async () => (await opened()).sweepCodes(),
    requestDigest: async (merchantId, text) => (await opened()).requestDigest(merchantId, text),
    async close() {
      const o = opening;
      opening = null;
      if (o !== null) await (await o.catch(() => null))?.close();
    },
  };
}
