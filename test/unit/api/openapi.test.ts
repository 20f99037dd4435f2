// docs/openapi.json must be what the schemas generate (regenerate with `npm run openapi`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument, openApiText } from '../../../src/api/openapi.ts';
import { PROBLEMS } from '../../../src/api/problems.ts';

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
});
