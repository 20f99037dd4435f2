// The planted-bug runs share one set of gateway processes, the bug chosen per run by a file: with
// no bug named, every seam must read as absent (production's own paths, transition's one-statement
// write included); with one named, exactly that bug's parts are in force.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlantedBug } from '../../../chaos/planted-bugs.ts';
import { readPlant, switchableSeams } from '../../../chaos/planted-switch.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';

describe('switchable planted seams', () => {
  it('with no bug, every per-use seam reads as absent and the wrappers do what production does', async () => {
    const s = switchableSeams(() => null);
    expect(s.transition?.step).toBeUndefined();
    expect(s.transition?.writePayment).toBeUndefined();
    expect(s.checks?.keyExpired).toBeUndefined();
    expect(s.checks?.judgeAnswer).toBeUndefined();
    expect(s.relay?.jobState).toBeUndefined();
    const answer: CallOutcome = { kind: 'unknown', reason: 'timeout', detail: 'x' };
    const effect = { op: 'authorize', providerKey: 'k' } as unknown as Parameters<NonNullable<typeof s.aroundCall>>[0];
    let calledWith: unknown = 'not called';
    await expect(s.aroundCall!(effect, async (e) => ((calledWith = e), answer))).resolves.toEqual(answer);
    expect(calledWith).toBeUndefined();
  });

  it('follows the current bug: its parts in force, the others absent', async () => {
    let bug: PlantedBug | null = 'skip_version_check';
    const s = switchableSeams(() => bug);
    expect(s.transition?.writePayment).toBeTypeOf('function');
    expect(s.checks?.keyExpired).toBeUndefined();
    bug = 'retention_not_checked_at_execution';
    expect(s.transition?.writePayment).toBeUndefined();
    expect(s.checks?.keyExpired?.('refund', new Date(0), new Date(), 1_000, 0)).toBeNull();
    bug = 'failover_on_timeout';
    const timeout: CallOutcome = { kind: 'unknown', reason: 'timeout', detail: 'x' };
    const effect = { op: 'authorize', providerKey: 'k' } as unknown as Parameters<NonNullable<typeof s.aroundCall>>[0];
    await expect(s.aroundCall!(effect, async () => timeout)).resolves.toMatchObject({ kind: 'not_sent' });
    bug = null;
    await expect(s.aroundCall!(effect, async () => timeout)).resolves.toEqual(timeout);
    bug = 'failed_job_blocks_row';
    await expect(s.relay?.jobState?.({} as never, 'ob_1')).resolves.toBe('unknown');
    bug = null;
    expect(s.relay?.jobState).toBeUndefined();
  });

  it('reads the bug from its file: empty or missing is none, an unknown name is an error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-plant-'));
    const file = join(dir, 'plant');
    expect(readPlant(file)).toBeNull();
    writeFileSync(file, '');
    expect(readPlant(file)).toBeNull();
    writeFileSync(file, 'stale_webhook\n');
    expect(readPlant(file)).toBe('stale_webhook');
    writeFileSync(file, 'no_such_bug');
    expect(() => readPlant(file)).toThrow(/unknown planted bug/);
  });
});
