// The gateway's test cards: Stripe's documented numbers, used for every provider. Each connector
// translates a scenario into its own sandbox trigger (Stripe pm_card_*, Adyen holder names).
// A test card is accepted only by a sandbox account; a live account refuses it before sending.

export const TEST_CARD_SCENARIOS = [
  'approved',
  'generic_decline',
  'insufficient_funds',
  'stolen_card',
  'lost_card',
  'expired_card',
  'incorrect_cvc',
  'processing_error',
  // Approves half the amount (Stripe's sandbox; Adyen's sandbox has no partial approval and approves it whole).
  'partial_authorization',
  // The issuer asks for customer authentication (3-D Secure challenge); the challenge page's buttons decide.
  'authentication_challenge',
  // Authenticated, then declined for insufficient funds.
  'authentication_then_insufficient_funds',
] as const;
export type TestCardScenario = (typeof TEST_CARD_SCENARIOS)[number];

export const TEST_CARDS: Readonly<Record<string, TestCardScenario>> = Object.freeze({
  '4242424242424242': 'approved',
  '4000000000000002': 'generic_decline',
  '4000000000009995': 'insufficient_funds',
  '4000000000009979': 'stolen_card',
  '4000000000009987': 'lost_card',
  '4000000000000069': 'expired_card',
  '4000000000000127': 'incorrect_cvc',
  '4000000000000119': 'processing_error',
  '4000000000000515': 'partial_authorization',
  '4000002760003184': 'authentication_challenge',
  '4000008260003178': 'authentication_then_insufficient_funds',
});

/** The card number for a scenario (the first listed), for tests and the CLI. */
export function testCardNumber(scenario: TestCardScenario): string {
  for (const [number, s] of Object.entries(TEST_CARDS)) if (s === scenario) return number;
  throw new Error(`no test card for scenario ${scenario}`);
}

export function testCardScenario(cardNumber: string): TestCardScenario | null {
  const digits = cardNumber.replace(/[\s-]/g, '');
  return Object.hasOwn(TEST_CARDS, digits) ? (TEST_CARDS[digits] ?? null) : null;
}
