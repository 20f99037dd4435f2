// The sandbox must answer like the real API: the official SDK parses every answer (every call in
// this kit goes through it), and sandbox objects carry the fields the provider's published examples
// show for the same object type.

import { describe, expect, it } from 'vitest';
import { useSandbox } from './context.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

export function registerWireCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('wire fidelity', () => {
    const kit = useSandbox(subject);

    it('sandbox objects carry every top-level field of the published example of their type', async () => {
      const { sandbox, connector } = kit();
      const samples = await subject.wireSamples(sandbox, connector);
      expect(samples.length).toBeGreaterThan(0);
      for (const s of samples) {
        const missing = Object.keys(s.reference).filter((k) => !Object.hasOwn(s.actual, k));
        expect(missing, `${s.objectType} lacks fields the provider's example has`).toEqual([]);
        for (const [k, v] of Object.entries(s.actual)) {
          const ref: unknown = s.reference[k];
          // Same JSON kind where both are set: an object stays an object, a number a number.
          if (v !== null && ref !== null && ref !== undefined) {
            expect(Array.isArray(v) ? 'array' : typeof v, `${s.objectType}.${k}`).toBe(Array.isArray(ref) ? 'array' : typeof ref);
          }
        }
      }
    });
  });
}
