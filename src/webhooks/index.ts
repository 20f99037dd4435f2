// What the composition root and the API mount: the provider intake (raw body, before any JSON
// parser), the merchant routes for endpoints and events, the public JWKS; and the dead letter.

export { createWebhookIntakeRouter } from './inbound/intake-router.ts';
export { listFailedInboundEvents, replayInboundEvent } from './inbound/inbox.ts';
export { createJwksRouter, createWebhookEndpointsRouter } from './outbound/merchant-routes.ts';
export { SIGNATURE_HEADER, verifyDetached } from './outbound/delivery-signature.ts';
export { generatePrivateJwk, rotateDatabaseSigningKey, SIGNING_JWKS_ENV } from './outbound/signing-keys.ts';
export type { WebhookOptions, WebhookServices } from './webhook-services.ts';
