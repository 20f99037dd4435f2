// The spike stage: open-loop creates (manual capture) at 3x the measured capacity for a fixed
// time, then at half the capacity for a while; every answer is classified. The admission bound
// (src/api/admission.ts) should shed the excess at once with 503 overloaded + Retry-After
// rather than queue it; no answer may be another 5xx.

import { randomBytes } from 'node:crypto';
import { card } from './gateway-stages.ts';
import { percentile, sleep } from './lib.ts';
import type { Http } from './lib.ts';

export interface SpikeResult {
  readonly requests: number;
  /** Answered with a payment (201 or 202): their latency. */
  readonly answeredP50Ms: number;
  readonly answeredP99Ms: number;
  readonly answered: number;
  /** 503 overloaded with Retry-After: refused on purpose, nothing written. */
  readonly shed: number;
  readonly shedP99Ms: number;
  /** Any other 5xx (a 503 without the overloaded code or Retry-After counts here). */
  readonly errors5xx: number;
  /** Other answers and transport failures (4xx, timeouts, resets). */
  readonly errorsOther: number;
  readonly statuses: Record<string, number>;
  /** From the end of the spike phase until the last request sent during it was answered. */
  readonly drainS: number;
  readonly spikeRate: number;
  readonly afterRate: number;
}

export async function spike(http: Http, keys: readonly string[], capacityPerS: number, spikeSeconds: number, afterSeconds: number): Promise<SpikeResult> {
  const spikeRate = Math.max(1, 3 * capacityPerS);
  const afterRate = Math.max(1, capacityPerS / 2);
  // Arrival times (ms after the start): the spike, then half the capacity.
  const due: { at: number; spike: boolean }[] = [];
  for (let t = 0; t < spikeSeconds * 1000; t += 1000 / spikeRate) due.push({ at: t, spike: true });
  for (let t = spikeSeconds * 1000; t < (spikeSeconds + afterSeconds) * 1000; t += 1000 / afterRate) due.push({ at: t, spike: false });

  const answeredMs: number[] = [];
  const shedMs: number[] = [];
  const statuses: Record<string, number> = {};
  let errors5xx = 0;
  let errorsOther = 0;
  let lastSpikeAnswer = 0;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < due.length; i++) {
    const d = due[i]!;
    const wait = started + d.at - performance.now();
    if (wait > 1) await sleep(wait);
    const key = keys[i % keys.length]!;
    pending.push(
      http.json('POST', '/v1/payments', { authorization: `Bearer ${key}`, 'idempotency-key': randomBytes(8).toString('hex') }, {
        amount: 1000, currency: 'EUR', reference: `spike-${randomBytes(4).toString('hex')}`, capture_method: 'manual', payment_method: card,
      }).then(
        (r) => {
          const label = `${r.status}${typeof r.json['code'] === 'string' ? ` ${r.json['code']}` : ''}`;
          statuses[label] = (statuses[label] ?? 0) + 1;
          if (r.status === 201 || r.status === 202) answeredMs.push(r.ms);
          else if (r.status === 503 && r.json['code'] === 'overloaded' && r.headers['retry-after'] !== undefined) shedMs.push(r.ms);
          else if (r.status >= 500) errors5xx++;
          else errorsOther++;
        },
        (err: unknown) => {
          const label = `error ${(err as Error).message.slice(0, 60)}`;
          statuses[label] = (statuses[label] ?? 0) + 1;
          errorsOther++;
        },
      ).finally(() => {
        if (d.spike) lastSpikeAnswer = Math.max(lastSpikeAnswer, performance.now() - started);
      }),
    );
  }
  await Promise.all(pending);
  return {
    requests: due.length, answered: answeredMs.length, answeredP50Ms: percentile(answeredMs, 50), answeredP99Ms: percentile(answeredMs, 99),
    shed: shedMs.length, shedP99Ms: percentile(shedMs, 99), errors5xx, errorsOther, statuses,
    drainS: Math.max(0, lastSpikeAnswer - spikeSeconds * 1000) / 1000, spikeRate, afterRate,
  };
}
