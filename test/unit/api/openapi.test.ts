// docs/openapi.json must be what the schemas generate (regenerate with `npm run openapi`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument, openApiText } from '../../../src/api/openapi.ts';
import { PROBLEMS } from '../../../src/api/problems.ts';
import { MERCHANT_EVENT_TYPES } from '../../../src/core/effects.ts';

describe('OpenAPI document', () => {
  it('docs/openapi.json has not drifted from the zod schemas', () => {
    expect(readFileSync('docs/openapi.json', 'utf8')).toBe(openApiText());
  });

  it('is OpenAPI 3.1 and describes the request schemas strictly', () => {
    const doc = openApiDocument() as { openapi: string; components: { schemas: Record<string, { additionalProperties?: boolean; properties?: Record<string, unknown> }> } };
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.components.schemas['CreatePaymentRequest']!;
    expect(create.additionalProperties).toBe(false);
    expect(create.properties?.['amount']).toMatchObject({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    expect(doc.components.schemas['Problem']!.properties?.['code']).toMatchObject({ enum: Object.keys(PROBLEMS) });
  });

  it('every /v1 answer carries the rate-limit fields, and every 429 Retry-After with the rate_limited problem', () => {
    type Response = { description: string; headers?: Record<string, { $ref: string }> };
    const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, Response> }>>; components: { headers: Record<string, unknown> } };
    expect(Object.keys(doc.components.headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Switchyard-Version']);
    let limited = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const names = Object.keys(response.headers ?? {});
          if (!path.startsWith('/v1/')) {
            expect(names, `${method} ${path} ${status}`).toEqual([]);
            continue;
          }
          expect(names, `${method} ${path} ${status}`).toEqual(status === '429' ? ['Switchyard-Version', 'RateLimit-Policy', 'RateLimit', 'Retry-After'] : ['Switchyard-Version', 'RateLimit-Policy', 'RateLimit']);
          if (status === '429') {
            expect(response.description).toContain('rate_limited');
            limited += 1;
          }
        }
      }
    }
    expect(limited).toBeGreaterThan(15);
  });
});

describe('OpenAPI operations', () => {
  it('every operation has a unique operationId and a tag; servers are set; every /v1 answer names its version', () => {
    type Op = { operationId?: string; tags?: string[]; responses: Record<string, { headers?: Record<string, unknown> }> };
    const doc = openApiDocument() as { servers?: unknown[]; paths: Record<string, Record<string, Op>> };
    expect(doc.servers?.length).toBeGreaterThan(0);
    const ids: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const op of Object.values(operations)) {
        expect(op.operationId, path).toMatch(/^[a-z][A-Za-z]+$/);
        expect(op.tags?.length, path).toBe(1);
        ids.push(op.operationId!);
        if (path.startsWith('/v1/')) for (const r of Object.values(op.responses)) expect(Object.keys(r.headers ?? {}), path).toContain('Switchyard-Version');
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('OpenAPI answers and webhooks', () => {
  it('every answer of every operation has a schema (204 aside), and the webhooks section names every event type with the Event body', () => {
    type Op = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
    const doc = openApiDocument() as { paths: Record<string, Record<string, Op>>; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }> };
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, r] of Object.entries(op.responses)) {
          if (status === '204') continue;
          const schemas = Object.values(r.content ?? {}).map((c) => c.schema);
          expect(schemas.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
          expect(schemas.every((x) => x !== undefined), `${method} ${path} ${status}`).toBe(true);
        }
      }
    }
    expect(Object.keys(doc.webhooks).sort()).toEqual([...MERCHANT_EVENT_TYPES].sort());
    for (const hook of Object.values(doc.webhooks)) expect(hook.post.requestBody.content['application/json']!.schema.$ref).toBe('#/components/schemas/Event');
  });
});
