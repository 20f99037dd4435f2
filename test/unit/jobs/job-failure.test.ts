// What a job's last failure means for its outbox row (src/jobs/job-failure.ts): an outage is run
// again, anything else is a dead letter, and infrastructure failures after claims are bounded.
import { describe, expect, it } from 'vitest';
import { asJobFailure, failedJobFate, isInfrastructureFailure, maxExecutionsFor } from '../../../src/jobs/job-failure.ts';

const pgError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe('asJobFailure', () => {
  it('marks a refused, cut or not-accepting connection, also when wrapped by drizzle, with the driver\'s words only', () => {
    const refused = asJobFailure(new Error('Failed query: UPDATE outbox SET claimed_until = $1\nparams: x', { cause: pgError('55000', 'database "sy" is not currently accepting connections') }));
    expect(isInfrastructureFailure(refused)).toBe(true);
    expect((refused as Error).message).toBe('infrastructure: database "sy" is not currently accepting connections');
    expect(isInfrastructureFailure(asJobFailure(pgError('57P01', 'terminating connection due to administrator command')))).toBe(true);
    expect(isInfrastructureFailure(asJobFailure(new Error('Connection terminated unexpectedly')))).toBe(true);
  });

  it('leaves any other failure as it is', () => {
    const bug = new TypeError('Cannot read properties of undefined');
    expect(asJobFailure(bug)).toBe(bug);
    expect(isInfrastructureFailure(bug)).toBe(false);
    expect(isInfrastructureFailure(asJobFailure(pgError('23505', 'duplicate key value violates unique constraint')))).toBe(false);
  });

  it("turns any other query error into the driver's words: BullMQ keeps message and stack, and drizzle's carry the parameters", () => {
    const failed = asJobFailure(new Error('Failed query: INSERT INTO payment_transitions (input) VALUES ($1)\nparams: {"PaRes":"eJzV-secret"}', { cause: pgError('22021', 'invalid byte sequence for encoding "UTF8": 0x00') })) as Error;
    expect(failed.message).toBe('database query failed: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)');
    expect(failed.stack).not.toContain('eJzV-secret');
    expect(isInfrastructureFailure(failed)).toBe(false);
  });
});

describe('failedJobFate', () => {
  const max = maxExecutionsFor(8);

  it('re-runs a row whose job failed on infrastructure, whatever its tries, below the bound of executions', () => {
    expect(max).toBe(24);
    expect(failedJobFate('infrastructure: connect ECONNREFUSED 127.0.0.1:5432', 0, max)).toEqual({ kind: 'rerun' });
    expect(failedJobFate('infrastructure: connect ECONNREFUSED 127.0.0.1:5432', 23, max)).toEqual({ kind: 'rerun' });
  });

  it('dead-letters one that failed for another reason at once, and an infrastructure failure past the bound', () => {
    expect(failedJobFate('planted: a bug', 1, max)).toEqual({ kind: 'dead', reason: 'planted: a bug' });
    expect(failedJobFate(undefined, 0, max)).toEqual({ kind: 'dead', reason: 'the job failed without a reason' });
    expect(failedJobFate('infrastructure: Connection terminated unexpectedly', 24, max)).toEqual({ kind: 'dead', reason: 'infrastructure: Connection terminated unexpectedly (claimed 24 times without finishing)' });
  });
});
