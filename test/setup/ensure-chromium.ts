// Run by `npm test` before vitest (the "pretest" script): the dashboard's browser test drives
// Debian's Chromium at /usr/bin/chromium. When it is missing, install it where we can (root with
// apt-get), saying so in one line; otherwise stop at once with one line naming what to install,
// rather than failing deep inside a browser test.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

export const CHROMIUM_PATH = '/usr/bin/chromium';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function main(): number {
  if (executable(CHROMIUM_PATH)) return 0;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !executable('/usr/bin/apt-get')) {
    console.error(`npm test: the browser tests need Debian's chromium at ${CHROMIUM_PATH}; install it (apt-get install chromium) and run again`);
    return 1;
  }
  console.error(`npm test: ${CHROMIUM_PATH} is missing; installing Debian's chromium with apt-get (for the browser tests)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'chromium']]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (run.status !== 0) {
      const why = (run.stderr || run.stdout || String(run.error ?? '')).trim().split('\n').pop() ?? '';
      console.error(`npm test: apt-get ${args.join(' ')} failed (${why}); install chromium and run again`);
      return 1;
    }
  }
  if (!executable(CHROMIUM_PATH)) {
    console.error(`npm test: apt-get installed chromium but ${CHROMIUM_PATH} is not there; install it and run again`);
    return 1;
  }
  return 0;
}

process.exitCode = main();
