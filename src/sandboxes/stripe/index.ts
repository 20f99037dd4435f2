// The Stripe sandbox's public surface.

export { startStripeSandbox } from './server.ts';
export type { StripeSandbox, StripeSandboxOptions, StripeWebhookEndpoint } from './server.ts';
export { STRIPE_TEST_PAYMENT_METHODS, testPaymentMethod, testPaymentMethodForCard } from './test-payment-methods.ts';
export type { TestCardBehaviour, TestPaymentMethod } from './test-payment-methods.ts';
export { STRIPE_API_VERSION, stripeSignatureHeader } from './events.ts';
