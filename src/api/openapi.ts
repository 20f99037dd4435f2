// OpenAPI 3.1 generated from the zod schemas the API validates and answers with. docs/openapi.json
// is this document; test/unit/api/openapi.test.ts fails when the two drift
// (regenerate with `npm run openapi`).

import { z } from 'zod';
import { captureBody, createPaymentBody, paymentMethodSchema, paymentMethodUnion, refundBody, storedPaymentToken, updatePaymentBody, voidBody } from './request-schemas.ts';
import { attemptResource, balanceList, balanceResource, captureResource, deliveredEvent, eventList, eventListItem, eventWithDeliveries, paymentList, paymentResource, problemResource, refundList, refundResource, routingResource, timelineList, transitionResource } from './resource-schemas.ts';
import { openApiQueryParameters } from './list-params.ts';
import { disputeListParams, eventListParams, paymentListParams, refundListParams } from './list-queries.ts';
import { MAX_KEY_LENGTH } from './idempotent-post.ts';
import { API_VERSIONS } from '../resources/api-version.ts';
import { MERCHANT_EVENT_TYPES } from '../core/effects.ts';
import { endpointBody, redeliverBody } from '../webhooks/outbound/merchant-routes.ts';
import { deletedWebhookEndpoint, redeliveryResource, webhookEndpointList, webhookEndpointResource } from '../webhooks/outbound/endpoint-schemas.ts';
import { PROBLEMS } from './problems.ts';
import { cardBody, cardInput, paymentMethodResource } from './payment-method-schemas.ts';
import type { ProblemCode } from './problems.ts';
import { apiKeyList, apiKeyResource, apiKeyWithSecret, createApiKeyBody, rollApiKeyBody } from './api-key-schemas.ts';
import { acceptBody, defenseReasonsResource, disputeList, disputeResource, evidenceBody, fileResource, MAX_FILE_BYTES } from './dispute-schemas.ts';

type JsonObject = Record<string, unknown>;

const COMPONENTS = {
  CreatePaymentRequest: createPaymentBody, CaptureRequest: captureBody, VoidRequest: voidBody, RefundRequest: refundBody,
  Payment: paymentResource, Attempt: attemptResource, Capture: captureResource, Routing: routingResource, Refund: refundResource, Transition: transitionResource,
  PaymentList: paymentList, RefundList: refundList, EventList: eventList, EventListItem: eventListItem, Timeline: timelineList, Problem: problemResource, Balance: balanceResource, BalanceList: balanceList,
  WebhookEndpointRequest: endpointBody, RedeliverRequest: redeliverBody.unwrap(), StoredPaymentToken: storedPaymentToken,
  Event: deliveredEvent, EventWithDeliveries: eventWithDeliveries, WebhookEndpoint: webhookEndpointResource, WebhookEndpointList: webhookEndpointList, DeletedWebhookEndpoint: deletedWebhookEndpoint, Redelivery: redeliveryResource,
  UpdatePaymentRequest: updatePaymentBody, CardRequest: cardBody, CardInput: cardInput, PaymentMethod: paymentMethodResource,
  CreateApiKeyRequest: createApiKeyBody, RollApiKeyRequest: rollApiKeyBody, ApiKey: apiKeyResource, ApiKeyWithSecret: apiKeyWithSecret, ApiKeyList: apiKeyList,
  Dispute: disputeResource, DisputeList: disputeList, DisputeDefenseOptions: defenseReasonsResource, DisputeEvidenceRequest: evidenceBody,
  DisputeAcceptRequest: acceptBody, File: fileResource,
};

function componentSchemas(): JsonObject {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  // The API parses payment_method as one object (precise errors), and documents the union it accepts.
  // Standalone, its named parts land in $defs: pointed at the components instead (each is one).
  const { $schema: _s, $defs: _d, anyOf, ...rest } = JSON.parse(
    JSON.stringify(z.toJSONSchema(paymentMethodUnion, { io: 'input', unrepresentable: 'any' })).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as JsonObject;
  // The variants exclude each other (each requires its own field, none allows another's): oneOf.
  const union = { ...rest, oneOf: anyOf };
  const out = z.toJSONSchema(registry, {
    io: 'input', uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.zodSchema !== paymentMethodSchema) return;
      for (const k of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonObject)[k];
      Object.assign(ctx.jsonSchema, union);
    },
  });
  const schemas: JsonObject = {};
  for (const [id, s] of Object.entries(out.schemas)) {
    const { $schema: _drop, id: _id, ...rest } = s as JsonObject;
    schemas[id] = rest;
  }
  return schemas;
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: string) => ({ 'application/json': { schema: ref(id) } });

// Answers that are not JSON resources: still described, so a generated client types every answer.
const HTML = { 'text/html': { schema: { type: 'string' } } };
const TEXT = { 'text/plain': { schema: { type: 'string' } } };
const JWKS = { 'application/json': { schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'A public JWK (ES256)' } } } } } };
const HEALTH = { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { type: 'string' }, checks: { type: 'object', additionalProperties: true }, config: { type: 'object', additionalProperties: true } } } } };

function problems(...codes: ProblemCode[]): JsonObject {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const c of codes) byStatus.set(PROBLEMS[c].status, [...(byStatus.get(PROBLEMS[c].status) ?? []), c]);
  return Object.fromEntries(
    [...byStatus].map(([status, cs]) => [String(status), { description: cs.join(', '), content: { 'application/problem+json': { schema: ref('Problem') } } }]),
  );
}

// insufficient_role: a secret key whose role does not allow the operation (docs/api.md, "Keys and modes").
const COMMON: ProblemCode[] = ['unauthorized', 'insufficient_role', 'rate_limited', 'internal_error', 'overloaded'];
const PUBLISHABLE_COMMON = COMMON.filter((c) => c !== 'insufficient_role');
const POST_PROBLEMS: ProblemCode[] = [
  ...COMMON, 'validation_error', 'malformed_json', 'idempotency_key_missing', 'idempotency_key_invalid', 'idempotency_request_in_progress',
  'idempotency_key_reused', 'payload_too_large',
];

const idempotencyKey = {
  name: 'Idempotency-Key', in: 'header', required: true,
  description: 'Retries with the same key and request replay the stored answer (with Idempotent-Replayed: true).',
  schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
};
const pathId = (what: string) => ({ name: 'id', in: 'path', required: true, description: `${what} id`, schema: { type: 'string' } });

function post(summary: string, body: string, ok: JsonObject, extra: ProblemCode[], id?: string): JsonObject {
  return {
    summary, parameters: [...(id === undefined ? [] : [pathId(id)]), idempotencyKey],
    requestBody: { required: body !== 'VoidRequest', content: json(body) },
    responses: { ...ok, ...problems(...POST_PROBLEMS, ...extra) },
  };
}

/** A list operation: its query parameters from the declarations the route parses with. */
function list(summary: string, params: Parameters<typeof openApiQueryParameters>[0], schema: string): JsonObject {
  return {
    summary, parameters: openApiQueryParameters(params),
    responses: {
      200: { description: 'A page: has_more says whether more lie beyond it the way it was read; next_cursor continues that way (as starting_after, or as ending_before when the page was read with ending_before)', content: json(schema) },
      ...problems(...COMMON, 'validation_error'),
    },
  };
}

// The rate limits' fields (draft-ietf-httpapi-ratelimit-headers; src/api/rate-limit.ts) on every
// answer of a /v1 route, Retry-After on its 429s too.
const HEADERS = {
  'RateLimit-Policy': {
    description: 'The quota policies this request drew from, a Structured Fields List (RFC 9651): `"merchant";q=200;w=2, "key";q=150;w=2, "create";q=100;w=2` (q requests per w seconds; policies merchant, key, and the operation: create, refund, write or read; publishable_key and client on POST /v1/tokens). Shared by every API process.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'What is left of each policy after this request: `"merchant";r=187;t=1, …` (r units left; t seconds until another is free, absent when the bucket is full). Absent while the limiter cannot be read (the request passed unlimited).',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds until the request would be served', schema: { type: 'integer', minimum: 1 } },
  'Switchyard-Version': { description: 'The API version of this answer (docs/changelog.md): the request\'s Switchyard-Version, else the merchant\'s pinned version, else the latest.', schema: { type: 'string', enum: [...API_VERSIONS] } },
};
const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

function withRateLimitHeaders(paths: Record<string, Record<string, JsonObject>>): Record<string, Record<string, JsonObject>> {
  for (const [path, operations] of Object.entries(paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const op of Object.values(operations)) {
      for (const [status, response] of Object.entries(op['responses'] as Record<string, JsonObject>)) {
        response['headers'] = {
          'Switchyard-Version': headerRef('Switchyard-Version'), 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit'),
          ...(status === '429' ? { 'Retry-After': headerRef('Retry-After') } : {}),
        };
      }
    }
  }
  return paths;
}

/** `postPaymentsByIdCapture` for POST /v1/payments/{id}/capture: unique by construction (one per method and path). */
function operationIdOf(method: string, path: string): string {
  const words = path.split('/').filter((s) => s !== '' && s !== 'v1').map((s) => {
    const name = /^\{(.+)\}$/.exec(s)?.[1];
    const camel = (name ?? s).split(/[^A-Za-z0-9]+/).filter((w) => w !== '').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
    return name === undefined ? camel : `By${camel}`;
  });
  return `${method}${words.join('')}`;
}

/** Every operation gets an operationId (unless it has one) and a tag: its resource, the path's first segment after /v1. */
function withIdsAndTags(paths: Record<string, Record<string, JsonObject>>): Record<string, Record<string, JsonObject>> {
  for (const [path, operations] of Object.entries(paths)) {
    const tag = path.split('/').filter((s) => s !== '' && s !== 'v1')[0] ?? 'root';
    for (const [method, op] of Object.entries(operations)) {
      op['operationId'] ??= operationIdOf(method, path);
      op['tags'] ??= [tag];
    }
  }
  return paths;
}

export function openApiDocument(): JsonObject {
  const payment = (status: string, description: string) => ({ [status]: { description, content: json('Payment') } });
  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard merchant API', version: '1.0.0', description: 'Amounts are integer minor units; currencies upper-case ISO 4217; errors application/problem+json (RFC 9457).' },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A secret key (sk_sy_live_… or sk_sy_test_…; keys made before modes: sk_sy_…), from your servers only. Its role decides which operations it may call (docs/api.md, "Keys and modes"): another answers 403 insufficient_role.' },
        publishableKey: { type: 'http', scheme: 'bearer', description: 'The publishable key (pk_sy_…): opens only POST /v1/tokens (and the hosted card form, as ?key=); every other route answers 401 to it.' },
      },
      headers: HEADERS,
    },
    security: [{ bearer: [] }],
    servers: [{ url: 'http://localhost:8080', description: '`npm start` (PORT): the gateway with its in-process sandboxes' }],
    paths: withIdsAndTags(withRateLimitHeaders({
      '/v1/payments': {
        post: post('Create a payment and wait for the authorization outcome', 'CreatePaymentRequest', {
          ...payment('201', 'The authorization outcome is known (authorized, captured, declined, failed, needs_review).'),
          ...payment('202', 'Still in flight after the wait.'),
        }, []),
        get: list('List payments, newest first (by created_at, then id); filters combine with AND', paymentListParams, 'PaymentList'),
      },
      '/v1/payments/{id}': {
        get: { summary: 'Retrieve a payment', parameters: [pathId('payment')], responses: { ...payment('200', 'The payment'), ...problems(...COMMON, 'not_found') } },
        post: post('Update the metadata (null removes a key); a payment.updated event, the state unchanged', 'UpdatePaymentRequest', { ...payment('200', 'The payment with its metadata changed') }, ['not_found'], 'payment'),
      },
      '/v1/payments/{id}/timeline': {
        get: { summary: 'Every transition with origin, input and raw provider status', parameters: [pathId('payment')], responses: { 200: { description: 'Oldest first', content: json('Timeline') }, ...problems(...COMMON, 'not_found') } },
      },
      '/v1/payments/{id}/capture': {
        post: post('Capture all or part of an authorization', 'CaptureRequest', {
          ...payment('200', 'The provider confirmed the capture'),
          ...payment('202', 'Still pending at the provider at the end of the wait (or parked for review): the capture shows as requested or pending'),
        }, ['not_found', 'invalid_state', 'amount_exceeds_authorized', 'capture_declined', 'capture_rejected'], 'payment'),
      },
      '/v1/payments/{id}/void': {
        post: post('Void an authorization', 'VoidRequest', {
          ...payment('200', 'The provider confirmed the void'), ...payment('202', 'Still pending at the provider at the end of the wait: the payment is voiding'),
        }, ['not_found', 'invalid_state', 'void_declined', 'void_rejected'], 'payment'),
      },
      '/v1/payments/{id}/refunds': {
        post: post('Refund all or part of what was captured', 'RefundRequest', {
          201: { description: 'The provider confirmed the refund', content: json('Refund') },
          202: { description: 'Still pending at the provider at the end of the wait: the refund is requested or pending', content: json('Refund') },
        }, ['not_found', 'invalid_state', 'amount_exceeds_captured', 'refund_declined', 'refund_rejected'], 'payment'),
      },
      '/v1/refunds': { get: list('List refunds, newest first; filters combine with AND', refundListParams, 'RefundList') },
      '/v1/refunds/{id}': {
        get: {
          summary: 'Retrieve a refund', parameters: [pathId('refund')],
          responses: { 200: { description: 'Final (succeeded, failed with failure_code, or reversed)', content: json('Refund') }, 202: { description: 'Pending', content: json('Refund') }, ...problems(...COMMON, 'not_found') },
        },
      },
      '/v1/tokens': {
        post: {
          summary: "Store a card from a customer's browser with the publishable key (the hosted card form does this). No Idempotency-Key. CORS for the merchant's allowed origins (switchyard merchants set-origins); a request whose Origin is not one of them is refused. Rate-limited per publishable key and per client address; at most SWITCHYARD_TOKENS_PER_HOUR payment methods per merchant per clock hour",
          security: [{ publishableKey: [] }],
          requestBody: { required: true, content: json('CardRequest') },
          responses: {
            201: { description: 'The masked payment method (the number and the code are never answered)', content: json('PaymentMethod') },
            ...problems(...PUBLISHABLE_COMMON, 'validation_error', 'malformed_json', 'payload_too_large', 'origin_not_allowed', 'payment_method_quota_exceeded'),
          },
        },
        options: {
          summary: "CORS preflight: allowed for an origin some merchant allowed (the preflight carries no key; the POST checks the key's merchant)", security: [],
          responses: { 204: { description: 'Access-Control-Allow-Origin: the origin; methods POST; headers Authorization, Content-Type' }, ...problems('origin_not_allowed', 'rate_limited') },
        },
      },
      '/v1/payment_methods': {
        post: post("Store a card sent by your server (merchants an operator allowed with switchyard merchants allow-raw-cards; the idempotency record keeps an HMAC of the request under a vault key and the masked answer)", 'CardRequest', {
          201: { description: 'The masked payment method', content: json('PaymentMethod') },
        }, ['raw_card_data_not_allowed', 'payment_method_quota_exceeded']),
      },
      '/v1/payment_methods/{id}': {
        get: { summary: 'Retrieve a payment method (masked)', parameters: [pathId('payment method')], responses: { 200: { description: 'The payment method', content: json('PaymentMethod') }, ...problems(...COMMON, 'not_found') } },
      },
      '/elements/card': {
        get: {
          summary: "The hosted card form, to frame on your checkout: it posts the card to /v1/tokens and sends your page {type: 'switchyard.payment_method', payment_method} with postMessage (targeting your allowed origins only). Content-Security-Policy frame-ancestors: your allowed origins",
          security: [],
          parameters: [
            { name: 'key', in: 'query', required: true, description: 'Your publishable key (pk_sy_…)', schema: { type: 'string' } },
            { name: 'origin', in: 'query', required: false, description: 'One of your allowed origins: the only one that may frame the form and receive its messages', schema: { type: 'string' } },
          ],
          responses: {
            200: { description: 'The form', content: HTML }, 401: { description: 'Not a valid publishable key', content: HTML },
            403: { description: 'The merchant has no allowed origins, or origin= is not one of them', content: HTML }, 429: { description: 'Too many requests from this address (Retry-After)', content: HTML },
          },
        },
      },
      '/v1/disputes': {
        get: list('List your disputes, newest first', disputeListParams, 'DisputeList'),
      },
      '/v1/disputes/{id}': { get: { summary: 'Retrieve a dispute', parameters: [pathId('dispute')], responses: { 200: { description: 'The dispute', content: json('Dispute') }, ...problems(...COMMON, 'not_found') } } },
      '/v1/disputes/{id}/defense_reasons': {
        get: {
          summary: "What the dispute's provider accepts as evidence now (Adyen: its defense reasons with their document types, asked of Adyen; Stripe: its evidence fields)",
          parameters: [pathId('dispute')],
          responses: { 200: { description: 'The options', content: json('DisputeDefenseOptions') }, ...problems(...COMMON, 'not_found', 'dispute_not_open', 'dispute_action_refused', 'service_unavailable') },
        },
      },
      '/v1/disputes/{id}/evidence': {
        post: post('Send evidence: each file to the provider, then the fields (Stripe) or the documents and, on submit, the defense reason (Adyen). Checked against what the provider takes first: an unknown reason, field or document type is a 400 naming it, and nothing is sent', 'DisputeEvidenceRequest', {
          200: { description: 'The provider took it: the dispute with evidence.sent_at (and submitted_at on submit). Its status moves by the provider\'s events', content: json('Dispute') },
        }, ['not_found', 'dispute_not_open', 'dispute_action_refused', 'service_unavailable'], 'dispute'),
      },
      '/v1/disputes/{id}/accept': {
        post: post('Accept the dispute: you will not defend it (lost, or an inquiry closed, by the provider\'s events)', 'DisputeAcceptRequest', {
          200: { description: 'The provider took it: the dispute with accepted_at', content: json('Dispute') },
        }, ['not_found', 'dispute_not_open', 'dispute_action_refused', 'service_unavailable'], 'dispute'),
      },
      '/v1/files': {
        post: {
          summary: `Upload a dispute evidence file: multipart/form-data with purpose=dispute_evidence and one part named file, at most ${MAX_FILE_BYTES} bytes (4 MB), a PDF, JPEG or PNG by its content (the declared type is not trusted). Kept in the gateway's database until it is sent with evidence`,
          parameters: [idempotencyKey],
          requestBody: {
            required: true,
            content: { 'multipart/form-data': { schema: { type: 'object', required: ['purpose', 'file'], properties: { purpose: { type: 'string', enum: ['dispute_evidence'] }, file: { type: 'string', format: 'binary' } } } } },
          },
          responses: { 201: { description: 'The file', content: json('File') }, ...problems(...POST_PROBLEMS) },
        },
      },
      '/v1/files/{id}': { get: { summary: "A file's metadata", parameters: [pathId('file')], responses: { 200: { description: 'The file', content: json('File') }, ...problems(...COMMON, 'not_found') } } },
      '/v1/balances': {
        get: { summary: 'Your balance per currency, from the ledger', responses: { 200: { description: 'One entry per currency with ledger activity', content: json('BalanceList') }, ...problems(...COMMON) } },
      },
      '/v1/webhook_endpoints': {
        post: post('Register an endpoint for signed event deliveries (at most SWITCHYARD_WEBHOOK_MAX_ENDPOINTS enabled ones, 16 by default)', 'WebhookEndpointRequest', { 201: { description: 'The endpoint', content: json('WebhookEndpoint') } }, ['endpoint_limit_reached']),
        get: { summary: 'List your endpoints (every enabled one: one page)', responses: { 200: { description: 'The endpoints', content: json('WebhookEndpointList') }, ...problems(...COMMON) } },
      },
      '/v1/webhook_endpoints/{id}/rotate_signing_key': {
        post: {
          summary: "Publish the endpoint's next key at once and sign with it 45 s later (longer than a remote JWKS verifier's 30 s refetch cooldown); the previous key stays in its JWKS for 10 minutes after that",
          parameters: [pathId('endpoint'), idempotencyKey],
          responses: { 200: { description: 'The endpoint: signing.kid the key signing now, signing.next_kid and signing.next_kid_signs_at the announced one', content: json('WebhookEndpoint') }, ...problems(...POST_PROBLEMS, 'not_found', 'signing_key_rotation_pending') },
        },
      },
      '/.well-known/webhook-endpoints/{id}/jwks.json': {
        get: { summary: "One endpoint's public keys (ES256): pin this URL to verify that endpoint's Switchyard-Signature", security: [], parameters: [pathId('endpoint')], responses: { 200: { description: 'JWK set', content: JWKS }, ...problems('not_found') } },
      },
      '/v1/webhook_endpoints/{id}': { delete: { summary: 'Delete an endpoint', parameters: [pathId('endpoint')], responses: { 200: { description: 'Deleted', content: json('DeletedWebhookEndpoint') }, ...problems(...COMMON, 'not_found') } } },
      '/v1/events': {
        get: list('List the events of the last 30 days, newest first, each as its webhook delivered it (older ones stay readable by id); filters combine with AND', eventListParams, 'EventList'),
      },
      '/v1/events/{id}': { get: { summary: 'An event with its deliveries and every delivery attempt', parameters: [pathId('event')], responses: { 200: { description: 'The event', content: json('EventWithDeliveries') }, ...problems(...COMMON, 'not_found') } } },
      '/v1/events/{id}/redeliver': {
        post: post('Deliver an event again (to one endpoint or all)', 'RedeliverRequest', { 202: { description: 'New deliveries scheduled', content: json('Redelivery') } }, ['not_found'], 'event'),
      },
      '/v1/api_keys': {
        post: post('Create an API key (a full key only). The secret is in this answer only: a replay answers secret: null', 'CreateApiKeyRequest', {
          201: { description: 'The key and its secret', content: json('ApiKeyWithSecret') },
        }, ['key_limit_reached']),
        get: { summary: 'List your working keys, never their secrets (a full key only)', responses: { 200: { description: 'Oldest first', content: json('ApiKeyList') }, ...problems(...COMMON) } },
      },
      '/v1/api_keys/{id}': {
        delete: {
          summary: "Delete a key: it answers 401 from then on (a full key only). Never the merchant's last working full key of a mode",
          parameters: [pathId('key')], responses: { 200: { description: 'The key, with revoked_at', content: json('ApiKey') }, ...problems(...COMMON, 'not_found', 'last_full_key') },
        },
      },
      '/v1/api_keys/{id}/roll': {
        post: post('Roll a key (a full key only): a new key with the same kind, role, mode and name, and its secret (a replay answers secret: null); the old key works expires_in seconds more', 'RollApiKeyRequest', {
          201: { description: 'The new key and its secret', content: json('ApiKeyWithSecret') },
        }, ['not_found', 'invalid_state'], 'key'),
      },
      '/.well-known/jwks.json': { get: { summary: 'The global public keys: they verify Switchyard-Signature only for endpoints created before per-endpoint keys (signing.global_signature)', security: [], responses: { 200: { description: 'JWK set', content: JWKS } } } },
      '/webhooks/{account}': {
        post: {
          summary: 'Provider notifications for a connector account (raw body; verified by the connector before anything is stored)', security: [],
          parameters: [{ name: 'account', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'Accepted (Adyen: [accepted])', content: TEXT }, 400: { description: 'Not verified', content: TEXT }, 401: { description: 'Bad credentials', content: TEXT } },
        },
      },
      '/healthz': { get: { summary: 'Process up', security: [], responses: { 200: { description: 'ok', content: HEALTH } } } },
      '/readyz': { get: { summary: 'Postgres, Redis and config ready', security: [], responses: { 200: { description: 'ready', content: HEALTH }, 503: { description: 'not ready', content: HEALTH } } } },
    })),
    // What your endpoints receive: one entry per event type, each the signed Event (docs/webhooks.md).
    webhooks: Object.fromEntries(MERCHANT_EVENT_TYPES.map((type) => [type, {
      post: {
        operationId: `webhook${type.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`, tags: ['webhooks'],
        summary: `The ${type} event, signed (Switchyard-Signature; verify with your endpoint's JWKS)`,
        requestBody: { required: true, content: json('Event') },
        responses: { '2XX': { description: 'Received: any 2xx acknowledges it; anything else is retried with backoff' } },
      },
    }])),
  };
}

export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
