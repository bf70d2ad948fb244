// Pending linearizable reads on the leader: each waits until a quorum has answered a heartbeat
// that carried its context, which proves the leader was still leader when the read arrived.

import type { Message, NodeId } from './types.js';
import { ctxKey } from './util.js';

/** One pending read: the request, the commit index when it arrived, who has acknowledged. */
export interface ReadIndexStatus {
  req: Message;
  index: number;
  acks: Set<NodeId>;
}

/** The queue of pending read-index requests. */
export class ReadOnly {
  private readonly pending = new Map<string, ReadIndexStatus>();
  private queue: string[] = [];

  /** Queues a read at commit index `index`. */
  addRequest(index: number, m: Message): void {
    const key = ctxKey(m.context);
    if (this.pending.has(key)) return;
    this.pending.set(key, { req: m, index, acks: new Set() });
    this.queue.push(key);
  }

  /** Records a heartbeat ack for ctx; returns the acks so far (undefined if unknown). */
  recvAck(id: NodeId, ctx: Uint8Array): Set<NodeId> | undefined {
    const rs = this.pending.get(ctxKey(ctx));
    if (!rs) return undefined;
    rs.acks.add(id);
    return rs.acks;
  }

  /** Removes and returns every read queued up to and including ctx (all confirmed by its quorum). */
  advance(ctx: Uint8Array): ReadIndexStatus[] {
    const key = ctxKey(ctx);
    const at = this.queue.indexOf(key);
    if (at < 0) return [];
    const done = this.queue.slice(0, at + 1);
    this.queue = this.queue.slice(at + 1);
    const out: ReadIndexStatus[] = [];
    for (const k of done) {
      const rs = this.pending.get(k);
      if (rs) out.push(rs);
      this.pending.delete(k);
    }
    return out;
  }

  /** The newest pending read's context (heartbeats carry it), or an empty one. */
  lastPendingRequestCtx(): Uint8Array {
    if (this.queue.length === 0) return new Uint8Array(0);
    return this.pending.get(this.queue[this.queue.length - 1])!.req.context;
  }

  pendingCount(): number {
    return this.queue.length;
  }
}
