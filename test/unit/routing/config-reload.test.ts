// Hot reload as an operator meets it (issue 43): an empty weighted set is refused like `priority: []`;
// the file watch survives atomic replaces (write a temporary file, rename it over the config, as
// editors, `sed -i` and `mv` do; a ConfigMap's ..data symlink swapped) and a directory replaced under it; a reload that adds
// or changes connector accounts (or their decline table) is refused at error, naming each, while
// one that removes an account applies; every outcome is kept for /readyz and the metrics.

import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigHolder } from '../../../src/routing/config-holder.ts';
import type { ReloadOutcome } from '../../../src/routing/config-holder.ts';
import { parseConfigText } from '../../../src/routing/config-loader.ts';

const config = (o: { default?: string; extraAccount?: string; stripeB?: string; declines?: string; rules?: string } = {}): string => `
connectors:
  stripe_a: { type: stripe, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  stripe_b: { type: stripe, secret_key: ${o.stripeB ?? 'sk_test_b'}, webhook_secrets: [whsec_b] }
${o.extraAccount ?? ''}
routing:
  rules: ${o.rules ?? '[]'}
  default: ${o.default ?? '{ priority: [stripe_a, stripe_b] }'}
declines: ${o.declines ?? '{}'}
`;

const versionOf = (text: string): string => {
  const r = parseConfigText(text, 'x.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.snapshot.version;
};

/** As an editor saves: the new text in a temporary file beside it, renamed over the config. */
function replaceAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp-${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function eventually(ok: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const holders: ConfigHolder[] = [];
afterEach(() => {
  for (const h of holders.splice(0)) h.close();
});

function open(text: string, checkMs?: number): { holder: ConfigHolder; file: string; dir: string; info: string[]; errors: string[]; outcomes: ReloadOutcome[] } {
  const dir = join(mkdtempSync(join(tmpdir(), 'sy-reload-')), 'config');
  mkdirSync(dir);
  const file = join(dir, 'switchyard.yaml');
  writeFileSync(file, text);
  const info: string[] = [];
  const errors: string[] = [];
  const holder = ConfigHolder.open(file, { log: { info: (l) => info.push(l), error: (l) => errors.push(l) }, ...(checkMs === undefined ? {} : { checkMs }) });
  if (!(holder instanceof ConfigHolder)) throw new Error(JSON.stringify(holder.problems));
  holders.push(holder);
  const outcomes: ReloadOutcome[] = [];
  holder.onReload((o) => outcomes.push(o));
  return { holder, file, dir, info, errors, outcomes };
}

describe('an empty candidate set', () => {
  it('`weighted: {}` is refused with its path, in a rule and as the default, as `priority: []` is', () => {
    const r = parseConfigText(config({ rules: '[{ name: split, when: { currency: [USD] }, weighted: {} }]', default: '{ weighted: {} }' }), 'x.yaml', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual(expect.arrayContaining([
      { path: 'routing.rules.0.weighted', message: 'needs at least one connector account with a weight' },
      { path: 'routing.default.weighted', message: 'needs at least one connector account with a weight' },
    ]));
    expect(parseConfigText(config({ default: '{ priority: [] }' }), 'x.yaml', {}).ok).toBe(false);
  });
});

describe('a reload that adds or changes connector accounts', () => {
  it('is refused at error naming each account and what changed (never a secret), and the old snapshot keeps serving', () => {
    const { holder, file, errors } = open(config());
    const v0 = holder.current().snapshot.version;

    writeFileSync(file, config({ extraAccount: '  stripe_c: { type: stripe, secret_key: sk_test_c, webhook_secrets: [whsec_c] }', default: '{ priority: [stripe_c, stripe_a] }' }));
    const problemsOf = (o: ReloadOutcome): string[] => (o.kind === 'rejected' ? o.problems.map((p) => `${p.path}: ${p.message}`) : [o.kind]);
    const added = holder.reload();
    expect(problemsOf(added)).toEqual([expect.stringMatching(/^connectors\.stripe_c: new connector account stripe_c needs a restart/)]);
    expect(holder.current().snapshot.version).toBe(v0);

    writeFileSync(file, config({ stripeB: 'sk_test_rotated', default: '{ priority: [stripe_b] }' }));
    const changed = holder.reload();
    expect(problemsOf(changed)).toEqual([expect.stringMatching(/^connectors\.stripe_b: connector account stripe_b changed \(secret_key\): needs a restart/)]);
    expect(JSON.stringify(changed)).not.toContain('sk_test_rotated');

    writeFileSync(file, config({ declines: '{ stripe: { insufficient_funds: { class: hard } } }' }));
    expect(problemsOf(holder.reload())).toEqual([expect.stringMatching(/^declines\.stripe: decline table for stripe changed \(insufficient_funds\): needs a restart/)]);

    expect(holder.current().snapshot.version).toBe(v0);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toContain(`config reload rejected; still serving ${v0}: connectors.stripe_c: new connector account stripe_c needs a restart`);
    expect(holder.status().lastReload).toMatchObject({ result: 'rejected', trigger: 'call' });
  });

  it('one that removes an account applies, and the account may come back unchanged', () => {
    const { holder, file, errors } = open(config());
    const without = config().replace(/ {2}stripe_b:.*\n/, '').replace('[stripe_a, stripe_b]', '[stripe_a]');
    writeFileSync(file, without);
    expect(holder.reload()).toMatchObject({ kind: 'swapped', to: versionOf(without) });
    writeFileSync(file, config());
    expect(holder.reload()).toMatchObject({ kind: 'swapped', to: versionOf(config()) });
    expect(errors).toEqual([]);
  });
});

describe('what a reload leaves for /readyz and the metrics', () => {
  it('the served snapshot, when it was loaded, the last outcome, and whether the file on disk differs', async () => {
    let now = new Date('2027-01-01T10:00:00Z');
    const dir = mkdtempSync(join(tmpdir(), 'sy-reload-'));
    const file = join(dir, 'switchyard.yaml');
    writeFileSync(file, config());
    const holder = ConfigHolder.open(file, { log: () => undefined, now: () => now });
    if (!(holder instanceof ConfigHolder)) throw new Error('open failed');
    expect(holder.status()).toEqual({ file, snapshot: versionOf(config()), loadedAt: new Date('2027-01-01T10:00:00Z'), lastReload: null });
    expect(await holder.diskState()).toEqual({ state: 'same' });

    now = new Date('2027-01-01T10:05:00Z');
    writeFileSync(file, 'routing: [');
    expect(await holder.diskState()).toEqual({ state: 'differs' });
    holder.reload('signal');
    expect(holder.status()).toMatchObject({ snapshot: versionOf(config()), loadedAt: new Date('2027-01-01T10:00:00Z'), lastReload: { result: 'rejected', trigger: 'signal', at: now } });
    expect(await holder.diskState()).toEqual({ state: 'differs' });

    // A comment changes the bytes, not the snapshot: unchanged, and the file is again the one served.
    now = new Date('2027-01-01T10:10:00Z');
    writeFileSync(file, `# reviewed\n${config()}`);
    expect(holder.reload()).toEqual({ kind: 'unchanged', version: versionOf(config()) });
    expect(holder.status()).toMatchObject({ loadedAt: now, lastReload: { result: 'unchanged' } });
    expect(await holder.diskState()).toEqual({ state: 'same' });
  });
});

describe('the file watch', () => {
  it('reloads after each of several atomic replaces (the directory is watched, not the first inode)', async () => {
    // A tick slower than the test: only the watch can see these changes.
    const { holder, file, outcomes } = open(config(), 60_000);
    holder.watch();
    const defaults = ['{ priority: [stripe_b, stripe_a] }', '{ weighted: { stripe_a: 1, stripe_b: 3 } }', '{ priority: [stripe_a] }'];
    for (const d of defaults) {
      const text = config({ default: d });
      replaceAtomically(file, text);
      await eventually(() => holder.current().snapshot.version === versionOf(text), `the reload to ${d}`);
    }
    expect(outcomes.map((o) => o.kind)).toEqual(['swapped', 'swapped', 'swapped']);
    expect(holder.status().lastReload).toMatchObject({ trigger: 'file' });
  });

  it('reloads when a Kubernetes ConfigMap update swaps the ..data symlink the file points through', async () => {
    const { holder, dir, outcomes } = open(config(), 60_000);
    // The volume's layout: switchyard.yaml -> ..data/switchyard.yaml, ..data -> ..<timestamp>/.
    const version = (n: number, text: string): void => {
      mkdirSync(join(dir, `..v${n}`));
      writeFileSync(join(dir, `..v${n}`, 'switchyard.yaml'), text);
      symlinkSync(`..v${n}`, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    version(1, config());
    rmSync(join(dir, 'switchyard.yaml'));
    symlinkSync(join('..data', 'switchyard.yaml'), join(dir, 'switchyard.yaml'));
    holder.watch();
    const text = config({ default: '{ priority: [stripe_b] }' });
    version(2, text);
    await eventually(() => holder.current().snapshot.version === versionOf(text), 'the reload after the ..data swap');
    expect(outcomes.map((o) => o.kind)).toEqual(['swapped']);
  });

  it('logs a watch lost with its directory at error, watches the new directory, and reloads what it holds', async () => {
    const { holder, file, dir, errors, info } = open(config(), 100);
    holder.watch();
    renameSync(dir, `${dir}.old`);
    await eventually(() => errors.some((l) => l.includes(`config watch on ${dir} lost`)), 'the lost watch logged');
    mkdirSync(dir);
    const text = config({ default: '{ priority: [stripe_b] }' });
    writeFileSync(file, text);
    await eventually(() => holder.current().snapshot.version === versionOf(text), 'the reload from the new directory');
    expect(info.some((l) => l.includes(`config watch on ${dir} re-armed`))).toBe(true);
    // Lost once, logged once: not a line per tick.
    expect(errors.filter((l) => l.includes('lost'))).toHaveLength(1);
  });
});
