// Throughput of the pure consensus core: 3 members in memory, messages handed over directly,
// proposals in batches; reports entries committed (on the leader) per second.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message, NodeId, Ready } from '../server/raft/index.js';
import { decodeConfChange, EntryType, MemoryStorage, RawNode, StateRole } from '../server/raft/index.js';

interface Member {
  id: NodeId;
  storage: MemoryStorage;
  node: RawNode;
}

function makeCluster(n: number): Member[] {
  const ids = Array.from({ length: n }, (_, i) => BigInt(i + 1));
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  return ids.map((id) => {
    const storage = new MemoryStorage();
    RawNode.bootstrap(storage, ids.map((p) => ({ id: p, context: new Uint8Array(0) })));
    const node = new RawNode({ id, electionTick: 10, heartbeatTick: 1, storage, preVote: true, checkQuorum: true, random, maxInflightMsgs: 256 });
    return { id, storage, node };
  });
}

/** Runs every member's Ready loop until nothing is pending; returns entries committed on `watch`. */
function pump(ms: Member[], byId: Map<NodeId, Member>, watch: NodeId): number {
  let committed = 0;
  let queue: Message[] = [];
  for (;;) {
    let any = false;
    for (const m of ms) {
      if (!m.node.hasReady()) continue;
      any = true;
      const rd: Ready = m.node.ready();
      if (rd.snapshot) m.storage.applySnapshot(rd.snapshot);
      if (rd.entries.length) m.storage.append(rd.entries);
      if (rd.hardState) m.storage.setHardState(rd.hardState);
      for (const msg of rd.messages) queue.push(msg);
      for (const e of rd.committedEntries) if (e.type === EntryType.ConfChange) m.node.applyConfChange(decodeConfChange(e.data));
      if (m.id === watch) committed += rd.committedEntries.length;
      m.node.advance(rd);
    }
    if (queue.length > 0) {
      any = true;
      const q = queue;
      queue = [];
      for (const msg of q) byId.get(msg.to)!.node.step(msg);
    }
    if (!any) return committed;
  }
}

/** Entries per second committed by a 3-member cluster of the pure core, proposals batched. */
export async function benchRaft(opts: { entries?: number; batch?: number; payload?: number } = {}): Promise<{ entriesPerSecond: number }> {
  const total = opts.entries ?? 200_000;
  const batch = opts.batch ?? 100;
  const data = new Uint8Array(opts.payload ?? 128);
  const datas = Array.from({ length: batch }, () => data);
  const ms = makeCluster(3);
  const byId = new Map(ms.map((m) => [m.id, m]));
  pump(ms, byId, 1n);
  ms[0].node.campaign();
  pump(ms, byId, 1n);
  if (ms[0].node.status().softState.role !== StateRole.Leader) throw new Error('member 1 did not become leader');
  const leader = ms[0];
  const start = performance.now();
  let done = 0;
  let ticks = 0;
  while (done < total) {
    leader.node.proposeMany(datas);
    done += pump(ms, byId, leader.id);
    // Compact now and then like a server would, so the log does not grow without bound.
    if (++ticks % 100 === 0) {
      for (const m of ms) {
        const applied = m.node.status().applied;
        if (applied - m.storage.firstIndex() > 20_000) {
          m.storage.createSnapshot(applied - 10_000, undefined, new Uint8Array(0));
          m.storage.compact(applied - 10_000);
        }
      }
      for (const m of ms) m.node.tick();
      pump(ms, byId, leader.id);
    }
  }
  const secs = (performance.now() - start) / 1000;
  return { entriesPerSecond: Math.round(done / secs) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const r = await benchRaft();
  process.stdout.write(`raft core, 3 members in memory, proposeMany batches of 100 x 128 B: ${r.entriesPerSecond} entries/s committed\n`);
}
