import { defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The order files start in. Unit files first, then the quick store and claim files: they take
 * seconds together and catch most breaks, so `vitest run --bail 1` stops within a minute of a broken
 * core (docs/testing.md). Then the chaos
 * runs, the longest files, so every other file fills in around them: sorted by size alone (a fresh
 * clone has no timings), the quick pass started after everything else and ended near CI's budget.
 */
const CHAOS_FIRST = ['test/integration/chaos/planted-bugs.test.ts', 'test/integration/chaos/quick-pass.test.ts'];
/** Quick integration files that guard the core's persistence (the edge trigger, claims): right after the unit files. */
const GUARDS_EARLY = ['test/integration/store/', 'test/integration/jobs/outbox-claims.test.ts'];

class UnitThenLongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      if (f.project.name === 'unit') return 0;
      if (GUARDS_EARLY.some((p) => f.moduleId.includes(p))) return 1;
      const i = CHAOS_FIRST.findIndex((name) => f.moduleId.endsWith(name));
      return i === -1 ? 2 + CHAOS_FIRST.length : 2 + i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

// Three projects: pure unit tests, integration tests against real PostgreSQL and Redis,
// and the connector conformance kit against the sandboxes. Each integration file makes its
// own database and queue prefix, so files run in parallel.
export default defineConfig({
  test: {
    sequence: { sequencer: UnitThenLongestFirst },
    // Per-file CPU when SWITCHYARD_TEST_CPU_LOG names a file (docs/testing.md); nothing otherwise.
    setupFiles: ['test/setup/cpu-per-file.ts'],
    // Vitest's default on 2 cores is one worker (cores - 1): every file in a row. Two run side by
    // side (each file has its own database and queue prefix). Three were tried (2026-12-02): the
    // suite is CPU-bound on two cores, and the load made timing-sensitive checks fail (a delivery
    // fairness bound, a customer's deadline in the quick pass) — docs/testing.md.
    maxWorkers: 2,
    // Tests register merchant webhook endpoints on loopback receivers: allowed here only (src/webhooks/outbound/address-policy.ts).
    env: { SWITCHYARD_WEBHOOK_ALLOW: process.env['SWITCHYARD_WEBHOOK_ALLOW'] ?? '127.0.0.0/8,::1,localhost' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
