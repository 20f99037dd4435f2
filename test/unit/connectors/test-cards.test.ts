import { describe, expect, it } from 'vitest';
import { TEST_CARD_SCENARIOS, TEST_CARDS, testCardNumber, testCardScenario } from '../../../src/connectors/test-cards.ts';

describe('gateway test cards', () => {
  it('map Stripe\'s documented numbers to scenarios, with spaces or dashes', () => {
    expect(testCardScenario('4242 4242 4242 4242')).toBe('approved');
    expect(testCardScenario('4000-0000-0000-9995')).toBe('insufficient_funds');
    expect(testCardScenario('4000000000009979')).toBe('stolen_card');
    expect(testCardScenario('4111111111111111')).toBeNull();
    expect(testCardScenario('constructor')).toBeNull();
  });

  it('have one number per scenario', () => {
    for (const s of TEST_CARD_SCENARIOS) expect(TEST_CARDS[testCardNumber(s)]).toBe(s);
    expect(new Set(Object.values(TEST_CARDS)).size).toBe(TEST_CARD_SCENARIOS.length);
  });
});
