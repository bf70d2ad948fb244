// SIGTERM on a member follows the reference's order (embed.Etcd.Close): client servers stop first, open
// calls are still served by a running member within the request timeout (a watch keeps receiving events),
// then the member stops (leadership transfer, raft). A watcher must never sit on a member that applies
// nothing; its stream ends cleanly instead of hanging, and the rest of the cluster keeps taking writes.
import { strict as assert } from 'node:assert';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';

type KvStub = { Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: { header: { revision: string } }) => void): void };

function put(kv: KvStub, key: string, value: string): Promise<number> {
  return new Promise((resolve, reject) =>
    kv.Put({ key: Buffer.from(key), value: Buffer.from(value) }, { deadline: Date.now() + 10000 }, (err, res) => (err ? reject(err) : resolve(Number(res.header.revision)))),
  );
}

/** Index of the first log line whose msg matches. */
function lineIndex(log: string, msg: RegExp): number {
  return log.split('\n').findIndex((l) => msg.test(l));
}

describe('shutdown order on SIGTERM (integration)', function () {
  this.timeout(120000);
  let cluster: SvcCluster | undefined;
  const conns: Connection[] = [];
  printLogsOnFailure(() => [cluster]);

  after(async () => {
    for (const c of conns) c.close();
    await cluster?.close();
  });

  it('a watcher keeps receiving events until its stream closes; writes through another member keep succeeding', async () => {
    cluster = await startSvcCluster({ size: 3 });
    const leader = await cluster.leader();
    const a = cluster.running().find((i) => i !== leader)!; // the member that shuts down
    const connA = new Connection(cluster.members[a].endpoint, undefined);
    const connB = new Connection(cluster.members[leader].endpoint, undefined);
    conns.push(connA, connB);
    const kvB = connB.stub('KV') as unknown as KvStub;

    const call = (connA.stub('Watch') as unknown as { Watch(): grpc.ClientDuplexStream<unknown, { created: boolean; events: Array<{ kv: { mod_revision: string } }> }> }).Watch();
    const seen: number[] = [];
    let created!: () => void;
    const isCreated = new Promise<void>((r) => (created = r));
    const ended = new Promise<string>((resolve) => {
      call.on('data', (r) => {
        if (r.created) created();
        for (const ev of r.events) seen.push(Number(ev.kv.mod_revision));
      });
      call.on('error', (e: grpc.ServiceError) => resolve(`error ${e.code}`));
      call.on('end', () => resolve('end'));
    });
    call.write({ create_request: { key: Buffer.from('sd/'), range_end: Buffer.from('sd0') } });
    await isCreated;

    // A steady writer through the leader for the whole test.
    let writing = true;
    const acked: number[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) acked.push(await put(kvB, `sd/${i % 10}`, `v${i}`));
    })();
    while (acked.length < 50) await new Promise((r) => setTimeout(r, 20));

    const beforeSignal = acked[acked.length - 1];
    const exited = cluster.members[a].process.exited;
    cluster.members[a].process.child.kill('SIGTERM');
    const how = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r('hang'), 30000))]);
    assert.notEqual(how, 'hang', 'the watch stream neither ended nor failed within 30 s of SIGTERM');
    const st = await exited;
    assert.equal(st.code, 0, `member exited with ${JSON.stringify(st)}`);
    const writesDuringShutdown = acked.length;
    while (acked.length < writesDuringShutdown + 20) await new Promise((r) => setTimeout(r, 20));
    writing = false;
    await writer; // every put through the leader succeeded (a failure rejects here)

    // Everything written up to the signal, and what was written while the stream stayed open, arrived in order.
    assert.ok(seen.length > 0);
    const first = seen[0];
    assert.deepEqual(seen, acked.filter((r) => r >= first && r <= seen[seen.length - 1]));
    assert.ok(seen[seen.length - 1] > beforeSignal, `the watcher saw nothing after the signal (last ${seen[seen.length - 1]}, signal at ${beforeSignal})`);

    // The order, from the member's log: client traffic stops before the member stops.
    const log = cluster.currentLog(a);
    const closing = lineIndex(log, /"msg":"closing etcd server"/);
    const clientStopped = lineIndex(log, /"msg":"stopped serving client traffic"/);
    const memberStop = lineIndex(log, /"msg":"(skipped leadership transfer|leadership transfer)/);
    const closed = lineIndex(log, /"msg":"closed etcd server"/);
    assert.ok(closing >= 0 && clientStopped > closing && memberStop > clientStopped && closed > memberStop, `unexpected order: closing ${closing}, client stopped ${clientStopped}, member stop ${memberStop}, closed ${closed}`);
  });
});
