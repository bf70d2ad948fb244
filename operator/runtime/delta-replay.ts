// Continuous backup's two ends at a member (groundwork, issue 27 item 2): reading the changes after a revision from a
// watch of the whole keyspace, and replaying changes into a member restored from the snapshot they follow, one
// transaction per revision, so that each replayed revision gets its original number (a transaction with writes is
// exactly one revision; the replay checks it after every one and stops at the first that is not), and the hash of a
// keyspace at a revision that a restore drill compares the replayed member's with the cluster's by.
import { createHash } from 'node:crypto';
import type { Client } from '../../server/client/index.js';
import { groupByRevision, type RevisionChange } from '../backup/delta.js';

/** Raised when a replay cannot go on: the member is not at the revision the changes follow, or a revision came out different. */
export class ReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

/** The member's current revision (a serializable read of nothing: its header). */
async function revisionOf(client: Client): Promise<number> {
  return Number((await client.get('\u0000', { serializable: true, countOnly: true })).header.revision);
}

/**
 * The changes of revisions `from`..`to` (inclusive), read by a watch of every key from `from`. Rejects when the
 * history is compacted past `from` (the caller takes a new full snapshot then) or `timeoutMs` passes first.
 */
export async function readChanges(client: Client, from: number, to: number, timeoutMs = 30_000): Promise<RevisionChange[]> {
  const w = client.watch('', { prefix: true, startRevision: from });
  const changes: RevisionChange[] = [];
  const timer = setTimeout(() => void w.cancel(), timeoutMs);
  try {
    for await (const r of w) {
      groupByRevision(r.events.filter((e) => Number(e.kv.mod_revision) <= to), changes);
      // a revision's events come in one response (no fragments were asked for)
      if (r.events.some((e) => Number(e.kv.mod_revision) >= to)) break;
    }
  } finally {
    clearTimeout(timer);
    await w.cancel();
  }
  if (changes.at(-1)?.revision !== to) throw new ReplayError(`the watch from revision ${from} ended at ${changes.at(-1)?.revision ?? 'nothing'} before revision ${to} (timed out after ${timeoutMs} ms)`);
  return changes;
}

/**
 * Replays `changes` (consecutive revisions after `base`) into the member behind `client`, which must be at revision
 * `base` (restored from the snapshot at base). Resolves with the revision reached.
 */
export async function replayChanges(client: Client, base: number, changes: readonly RevisionChange[]): Promise<number> {
  let at = await revisionOf(client);
  if (at !== base) throw new ReplayError(`the member is at revision ${at}, the changes follow revision ${base}: replay only into a member restored from that snapshot and not written to since`);
  for (const c of changes) {
    if (c.revision !== at + 1) throw new ReplayError(`revision ${c.revision} does not follow ${at}`);
    const r = await client.txn({ success: c.ops.map((o) => (o.type === 'put' ? { put: { key: o.key, value: o.value } } : { delete: { key: o.key } })) });
    at = Number(r.header.revision);
    if (at !== c.revision) throw new ReplayError(`replaying revision ${c.revision} made revision ${at} (a delete of a key that was not there?): the member's history no longer matches the source's`);
  }
  return at;
}


/**
 * The keyspace at `revision` as one hash: sha256 over every key with its value, create and mod revision and version,
 * in key order, read in pages of 1000 keys. Leases are left out (a replay does not carry them), so a member replayed
 * from delta segments and the cluster they came from hash alike exactly when they hold the same keys and history.
 */
export async function keyspaceHash(client: Client, revision: number): Promise<{ hash: string; keys: number }> {
  const h = createHash('sha256');
  let from = Buffer.from([0]);
  let keys = 0;
  for (;;) {
    const r = await client.get(from, { fromKey: true, revision, limit: 1000 });
    for (const kv of r.kvs) {
      const key = Buffer.from(kv.key);
      const value = Buffer.from(kv.value);
      h.update(`${key.length}:`).update(key).update(`${value.length}:`).update(value).update(`${String(kv.create_revision)},${String(kv.mod_revision)},${String(kv.version)};`);
    }
    keys += r.kvs.length;
    if (!r.more || r.kvs.length === 0) break;
    from = Buffer.concat([Buffer.from(r.kvs.at(-1)!.key), Buffer.from([0])]);
  }
  return { hash: h.digest('hex'), keys };
}
