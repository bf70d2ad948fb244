// The concurrent clients of a chaos run: each loops over random put/get/delete/compare-and-set on a
// small key set through the thin gRPC client, recording every operation in the shared history. A
// client whose call fails moves to another running member for its next call.

import { sleep } from '../process.js';
import type { ChaosCluster } from './cluster.js';

/** What the workload needs of a cluster: its members' gRPC endpoints and which run (a ChaosCluster, or any cluster). */
export type WorkloadTarget = { readonly members: ReadonlyArray<{ readonly name: string; readonly endpoint: string }> } & Pick<ChaosCluster, 'running'>;
import type { HistoryRecorder, KvInput } from './history.js';
import { ChaosKvClient } from './kv-client.js';
import type { Rng } from './rng.js';

export interface WorkloadOptions {
  clients: number;
  keys: readonly string[];
  /** Per-call deadline. */
  deadlineMs?: number;
}

/** N client loops over one cluster. */
export class Workload {
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly conns: ChaosKvClient[];

  constructor(
    private readonly cluster: WorkloadTarget,
    private readonly history: HistoryRecorder,
    private readonly rand: Rng,
    private readonly opts: WorkloadOptions,
  ) {
    this.conns = cluster.members.map((m) => new ChaosKvClient(m.endpoint, opts.deadlineMs ?? 2000));
  }

  /** Starts the client loops. */
  start(): void {
    for (let c = 0; c < this.opts.clients; c++) this.loops.push(this.loop(c, this.rand.fork(`client${c}`)));
  }

  /** Stops the loops (waits for calls in flight) and closes the channels. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  /** Closes the gRPC channels. */
  close(): void {
    for (const c of this.conns) c.close();
  }

  /** One linearizable read of every key through every running member, recorded as client -1. */
  async finalReads(): Promise<void> {
    for (const i of this.cluster.running()) {
      for (const key of this.opts.keys) {
        const done = this.history.invoke(-1, { kind: 'get', key }, this.cluster.members[i].name);
        const r = await this.conns[i].run({ kind: 'get', key });
        done(r.outcome, r.output, { revision: r.revision, error: r.error });
      }
    }
  }

  /** The connection to member i. */
  conn(i: number): ChaosKvClient {
    return this.conns[i];
  }

  private async loop(client: number, r: Rng): Promise<void> {
    let member = client % this.conns.length;
    const seen = new Map<string, string | null>();
    let n = 0;
    while (!this.stopping) {
      const key = r.pick(this.opts.keys);
      const value = `c${client}.${n++}`;
      const dice = r.next();
      let input: KvInput;
      if (dice < 0.4) input = { kind: 'get', key };
      else if (dice < 0.7) input = { kind: 'put', key, value };
      else if (dice < 0.8) input = { kind: 'delete', key };
      else input = { kind: 'cas', key, expected: r.next() < 0.8 ? (seen.get(key) ?? null) : null, value };
      const m = this.cluster.members[member];
      const done = this.history.invoke(client, input, m.name);
      const res = await this.conns[member].run(input);
      const op = done(res.outcome, res.output, { revision: res.revision, error: res.error });
      if (op.outcome === 'ok' && op.output?.kind === 'get') seen.set(key, op.output.value);
      if (op.outcome === 'ok' && input.kind === 'put') seen.set(key, input.value);
      if (op.outcome !== 'ok') {
        const up = this.cluster.running();
        member = up.length ? up[r.int(up.length)] : (member + 1) % this.conns.length;
        await sleep(50); // do not spin while the cluster has no leader
      } else {
        await sleep(r.int(3));
      }
    }
  }
}
