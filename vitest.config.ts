import { defineConfig } from 'vitest/config';

// Three projects: pure unit tests, integration tests against real PostgreSQL and Redis,
// and the connector conformance kit against the sandboxes. Each integration file makes its
// own database and queue prefix, so files run in parallel.
export default defineConfig({
  test: {
    // Tests register merchant webhook endpoints on loopback receivers: allowed here only (src/webhooks/outbound/address-policy.ts).
    env: { SWITCHYARD_WEBHOOK_ALLOW: process.env['SWITCHYARD_WEBHOOK_ALLOW'] ?? '127.0.0.0/8,::1,localhost' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000 } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
