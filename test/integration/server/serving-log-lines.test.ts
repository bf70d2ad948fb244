// The reference's serving lines, which tools and test suites wait for: "ready to serve client requests"
// and "serving client traffic insecurely; this is strongly discouraged!" (zap, 3.5), the capnslog wording
// of 3.3/3.4, and "now serving peer/client/metrics". They appear once the member is published, and a
// client can use the member as soon as they do.
import { strict as assert } from 'node:assert';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { useSvcClusters } from '../../../harness/svc-cluster.js';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';

type KvStub = { Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void): void };

function putOnce(endpoint: string): Promise<void> {
  const conn = new Connection(endpoint, undefined);
  const kv = conn.stub('KV') as unknown as KvStub;
  return new Promise<void>((resolve, reject) =>
    kv.Put({ key: Buffer.from('k'), value: Buffer.from('v') }, { deadline: Date.now() + 5000 }, (err) => (err ? reject(err) : resolve())),
  ).finally(() => conn.close());
}

describe('serving log lines as the reference prints them (integration)', function () {
  this.timeout(90000);
  const clusters = useSvcClusters();

  it('3.5 (zap): ready to serve, then serving insecurely with the address; a client connects at once', async () => {
    const cluster = await clusters.start({ size: 1, waitHealthy: false });
    const m = cluster.members[0];
    const ready = await cluster.waitForLog(0, /"msg":"ready to serve client requests"/);
    const serving = await cluster.waitForLog(0, /"msg":"serving client traffic insecurely; this is strongly discouraged!"/);
    await putOnce(m.endpoint);
    assert.match(ready, /"caller":"embed\//);
    assert.equal((JSON.parse(serving) as { address: string }).address, m.endpoint);
    const lines = cluster.currentLog(0).split('\n');
    const idx = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const now = idx(/"msg":"now serving peer\/client\/metrics"/);
    const published = idx(/"msg":"published local member to cluster through raft"/);
    assert.ok(now >= 0 && published > now && idx(/ready to serve client requests/) > published && idx(/serving client traffic insecurely/) > idx(/ready to serve client requests/));
    const fields = JSON.parse(lines[now]) as Record<string, unknown>;
    assert.deepEqual(fields['listen-client-urls'], [m.clientURL]);
    assert.deepEqual(fields['listen-peer-urls'], [m.peerURL]);
    assert.equal(lines.filter((l) => l.includes('ready to serve client requests')).length, 1);
  });

  it('3.4 (capnslog default): the capnslog wording', async () => {
    const cluster = await clusters.start({ size: 1, waitHealthy: false, version: '3.4.34' });
    const m = cluster.members[0];
    await cluster.waitForLog(0, /embed: ready to serve client requests$/);
    await cluster.waitForLog(0, new RegExp(`embed: serving insecure client requests on ${m.endpoint.replace(/\./g, '\\.')}, this is strongly discouraged!$`));
    await putOnce(m.endpoint);
  });

  it('3.4 with --logger=zap: no ready line (as the reference), the zap serving line', async () => {
    const cluster = await clusters.start({ size: 1, waitHealthy: false, version: '3.4.34', extraArgs: ['--logger=zap'] });
    await cluster.waitForLog(0, /"msg":"serving client traffic insecurely; this is strongly discouraged!"/);
    assert.doesNotMatch(cluster.currentLog(0), /ready to serve client requests/);
    await putOnce(cluster.members[0].endpoint);
  });

  it('side by side with the reference 3.4 (zap): the same serving and shutdown lines, in the same order', async () => {
    // The messages tools watch for, in the order the reference prints them around a start and a SIGTERM.
    const wanted = ['now serving peer/client/metrics', 'serving client traffic insecurely; this is strongly discouraged!', 'closing etcd server', 'closed etcd server'];
    const order = (log: string) =>
      log
        .split('\n')
        .map((l) => /"msg":"([^"]*)"/.exec(l)?.[1])
        .filter((m): m is string => m !== undefined && wanted.includes(m));
    let ref: ReferenceCluster | undefined;
    let refLog: string;
    try {
      ref = await startReferenceCluster({ size: 1, extraArgs: ['--logger=zap'] });
      await ref.members[0].process.stop('SIGTERM', 20000);
      refLog = ref.members[0].process.log();
    } finally {
      await ref?.stop();
    }
    const cluster = await clusters.start({ size: 1, version: '3.4.34', extraArgs: ['--logger=zap'] });
    await cluster.waitForLog(0, /serving client traffic insecurely/);
    const st = await cluster.stop(0);
    assert.equal(st.code, 0);
    assert.deepEqual(order(refLog), wanted, 'the reference printed something else');
    assert.deepEqual(order(cluster.currentLog(0)), wanted);
  });
});
