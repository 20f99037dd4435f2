// A private redis-server on a free port: the chaos harness's, shared with the tests that flush or
// restart Redis without disturbing the shared one other test files use.
export { freePort, startPrivateRedis } from '../../../chaos/private-redis.ts';
export type { PrivateRedis } from '../../../chaos/private-redis.ts';
