// The role table: docs/api.md shows the one the API enforces (regenerate with `npm run docs:roles`),
// and a request finds its row as express finds its route.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operationFor, rolesAllowed } from '../../../src/api/key-roles.ts';
import { ROLE_TABLE_DOC, withRoleTable } from '../../../src/api/role-table-doc.ts';

describe('role table', () => {
  it('docs/api.md has not drifted from src/api/key-roles.ts', () => {
    const doc = readFileSync(ROLE_TABLE_DOC, 'utf8');
    expect(doc).toBe(withRoleTable(doc));
  });

  it('matches paths by segment, HEAD as GET, case-blind, a trailing slash ignored; anything else is full only', () => {
    expect(operationFor('GET', '/v1/payments/pay_1/timeline')?.path).toBe('/v1/payments/:id/timeline');
    expect(operationFor('HEAD', '/v1/payments/pay_1')?.path).toBe('/v1/payments/:id');
    expect(operationFor('GET', '/V1/Payments/')?.path).toBe('/v1/payments');
    expect(rolesAllowed('POST', '/v1/payments/pay_1/refunds')).toEqual(['full', 'refunds']);
    for (const [method, path] of [['GET', '/v1/payments/pay_1/timeline/x'], ['GET', '/v1/payments//timeline'], ['PUT', '/v1/payments'], ['POST', '/v1/tokens']]) {
      expect([method, path, rolesAllowed(method!, path!)]).toEqual([method, path, ['full']]);
    }
  });
});
