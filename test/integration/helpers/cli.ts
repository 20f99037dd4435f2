// Runs the CLI through its launcher (bin/switchyard.js), as `npx switchyard` does.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCli(args: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = 60_000): Promise<CliResult> {
  try {
    const r = await run('node', ['bin/switchyard.js', ...args], { env: { ...process.env, ...env }, timeout: timeoutMs });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Two operators (src/ops/operators.ts) and the CLI credential of each: operator commands are audited under the token's name. */
const OPERATORS = 'alice:alice-token-0123456789abcdef0123,bob:bob-token-0123456789abcdef01234';
export const OPERATOR_ENV = {
  alice: { SWITCHYARD_OPERATORS: OPERATORS, SWITCHYARD_OPERATOR_TOKEN: 'alice-token-0123456789abcdef0123' },
  bob: { SWITCHYARD_OPERATORS: OPERATORS, SWITCHYARD_OPERATOR_TOKEN: 'bob-token-0123456789abcdef01234' },
} as const;
