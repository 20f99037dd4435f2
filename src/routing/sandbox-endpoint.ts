// Which endpoints are sandboxes: the one fact the account modes, the live-secret checks and the
// snapshot all start from (its own file, so none of them imports another for it).

import { isIPv4 } from 'node:net';

/**
 * In-process sandboxes and sandboxes on this machine (switchyard sandbox) take test cards and the
 * public sandbox secrets (src/routing/live-secrets.ts); nothing else does. A loopback address only:
 * a name such as 127.0.0.1.example.com is somebody else's machine.
 */
export function isSandboxEndpoint(endpoint: string): boolean {
  if (endpoint === 'sandbox') return true;
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || (isIPv4(host) && host.startsWith('127.'));
}
