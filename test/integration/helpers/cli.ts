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
