// Routing snapshots by version: written when a config is loaded, read by any process that must
// evaluate a payment against the snapshot it was routed with. Content is immutable, so it caches.

import { sql } from 'drizzle-orm';
import { withAccountModes } from '../routing/snapshot.ts';
import type { RoutingSnapshot } from '../routing/snapshot.ts';
import type { DbOrTx } from './db.ts';

export async function saveRoutingSnapshot(db: DbOrTx, snapshot: RoutingSnapshot): Promise<void> {
  await db.execute(sql`INSERT INTO routing_snapshots (version, content) VALUES (${snapshot.version}, ${JSON.stringify(snapshot)}::jsonb) ON CONFLICT (version) DO NOTHING`);
}

export class RoutingSnapshotStore {
  private readonly cache = new Map<string, RoutingSnapshot>();

  remember(snapshot: RoutingSnapshot): void {
    this.cache.set(snapshot.version, snapshot);
  }

  async load(db: DbOrTx, version: string): Promise<RoutingSnapshot | null> {
    const hit = this.cache.get(version);
    if (hit !== undefined) return hit;
    const res = await db.execute<{ content: RoutingSnapshot }>(sql`SELECT content FROM routing_snapshots WHERE version = ${version}`);
    const stored = res.rows[0]?.content;
    const found = stored === undefined ? null : withAccountModes(stored);
    if (found !== null) this.cache.set(version, found);
    return found;
  }
}
