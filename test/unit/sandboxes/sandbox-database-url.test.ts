// Where the sandbox keeps its state: the gateway's database name + _sandbox by default, or
// SANDBOX_DATABASE_URL — and never the gateway's own database.

import { describe, expect, it } from 'vitest';
import { SandboxDatabaseError, sandboxDatabaseUrl } from '../../../src/sandboxes/shared/database.ts';

const gateway = 'postgres://postgres@127.0.0.1:5432/switchyard';

describe('sandboxDatabaseUrl', () => {
  it('defaults to the gateway database name with _sandbox, same server and credentials', () => {
    expect(sandboxDatabaseUrl(gateway, {})).toBe('postgres://postgres@127.0.0.1:5432/switchyard_sandbox');
    expect(sandboxDatabaseUrl('postgres://u:p@db.internal/pay', {})).toBe('postgres://u:p@db.internal/pay_sandbox');
  });

  it('takes SANDBOX_DATABASE_URL when set (an empty value is unset)', () => {
    expect(sandboxDatabaseUrl(gateway, { SANDBOX_DATABASE_URL: 'postgres://other@10.0.0.2:5433/provider' })).toBe('postgres://other@10.0.0.2:5433/provider');
    expect(sandboxDatabaseUrl(gateway, { SANDBOX_DATABASE_URL: '' })).toBe('postgres://postgres@127.0.0.1:5432/switchyard_sandbox');
  });

  it("refuses the gateway's own database, default port spelled or not", () => {
    expect(() => sandboxDatabaseUrl(gateway, { SANDBOX_DATABASE_URL: 'postgres://someone@127.0.0.1/switchyard' })).toThrow(SandboxDatabaseError);
    expect(() => sandboxDatabaseUrl(gateway, { SANDBOX_DATABASE_URL: gateway })).toThrow(/names the gateway's own database/);
  });

  it('accepts the same database name on another server', () => {
    expect(sandboxDatabaseUrl(gateway, { SANDBOX_DATABASE_URL: 'postgres://postgres@127.0.0.2:5432/switchyard' })).toBe('postgres://postgres@127.0.0.2:5432/switchyard');
  });
});
