// An answer is judged against the outbox row's claim as it is when the answer is applied: only a
// refusal can lose its meaning (another execution may be charging); money facts always count.
import { describe, expect, it } from 'vitest';
import { judgeAnswerAgainstClaim } from '../../../src/core/execution-claim.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';

const refused: CallOutcome = { kind: 'not_sent', reason: 'connection_refused' };
const approved: CallOutcome = { kind: 'succeeded', providerRef: 'pi_1', amount: 1000 };
const declined: CallOutcome = { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'card_declined', providerCode: 'card_declined' };
const mine = { token: 'ob_1~a', executions: 1 };

describe('judgeAnswerAgainstClaim', () => {
  it('a refusal from the only execution, still holding its claim, is proof', () => {
    expect(judgeAnswerAgainstClaim(refused, 'authorize', { mine, now: { token: 'ob_1~a', executions: 1 } })).toEqual(refused);
  });

  it('a refusal after another execution claimed the row since is unknown{superseded_execution}, whatever the op', () => {
    for (const op of ['authorize', 'capture', 'refund', 'void', 'fence', 'release'] as const) {
      const out = judgeAnswerAgainstClaim(refused, op, { mine, now: { token: 'ob_1~b', executions: 2 } });
      expect(out).toMatchObject({ kind: 'unknown', reason: 'superseded_execution' });
    }
  });

  it('a refusal when the row is gone is not proof either', () => {
    expect(judgeAnswerAgainstClaim(refused, 'authorize', { mine, now: null })).toMatchObject({ kind: 'unknown', reason: 'superseded_execution' });
  });

  it('a refusal on a re-execution that still holds its claim is unknown{earlier_execution}', () => {
    const again = { token: 'ob_1~c', executions: 3 };
    expect(judgeAnswerAgainstClaim(refused, 'capture', { mine: again, now: again })).toMatchObject({ kind: 'unknown', reason: 'earlier_execution' });
  });

  it('successes and declines from a superseded execution are kept: they are facts about money', () => {
    const now = { token: 'ob_1~b', executions: 2 };
    expect(judgeAnswerAgainstClaim(approved, 'authorize', { mine, now })).toEqual(approved);
    expect(judgeAnswerAgainstClaim(declined, 'authorize', { mine, now })).toEqual(declined);
  });

  it('a query refusal is a read that failed: never re-judged', () => {
    expect(judgeAnswerAgainstClaim(refused, 'query', { mine, now: { token: 'x', executions: 5 } })).toEqual(refused);
  });
});
