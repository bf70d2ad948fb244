// HashKV after a compaction: compact_revision on every member (gRPC, the gateway and the real etcdctl's
// `endpoint hashkv`), no hash_revision (the reference fills it only from 3.6 on), and the 3.4 answer shaped like
// the reference 3.4.23's.
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../../server/wire/index.js';
import { startSvcCluster, postJson, printLogsOnFailure, type SvcCluster } from '../../../harness/svc-cluster.js';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { sleep } from '../../../harness/process.js';

type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function hashKV(endpoint: string, revision: number): Promise<Msg> {
  const cl = new (loadClients().Maintenance)(endpoint, grpc.credentials.createInsecure());
  return new Promise<Msg>((resolve, reject) => {
    (cl as unknown as { HashKV(r: Msg, cb: (e: grpc.ServiceError | null, r: Msg) => void): void }).HashKV({ revision }, (e, r) => (e ? reject(e) : resolve(r)));
  }).finally(() => cl.close());
}

/** Puts and deletes some keys, then compacts (physically) at a revision in the middle; returns that revision. */
async function writeAndCompact(post: (path: string, body: unknown) => Promise<{ status: number; body: Msg }>): Promise<number> {
  let rev = 0;
  for (let i = 0; i < 10; i++) {
    const r = await post('/v3/kv/put', { key: Buffer.from(`hk/${i % 4}`).toString('base64'), value: Buffer.from(`v${i}`).toString('base64') });
    rev = Number(r.body.header.revision);
  }
  await post('/v3/kv/deleterange', { key: Buffer.from('hk/0').toString('base64') });
  const compactAt = rev - 3;
  const res = await post('/v3/kv/compaction', { revision: compactAt, physical: true });
  expect(res.status).to.equal(200);
  return compactAt;
}

describe('HashKV after a compaction on a 3-member svc 3.5 cluster', function () {
  this.timeout(120000);
  let c: SvcCluster;
  let compactAt: number;
  before(async function () {
    c = await startSvcCluster({ size: 3 });
    compactAt = await writeAndCompact((p, b) => c.post(0, p, b));
  });
  after(async () => c?.close());
  printLogsOnFailure(() => [c]);

  it('every member answers compact_revision (no hash_revision), and the same hash at the same revision', async function () {
    const rev = Number(((await c.status(0)).header as Msg).revision);
    const answers: Msg[] = [];
    for (const m of c.members) {
      // A follower applies the compaction on its own; wait until it has.
      let a = await hashKV(m.endpoint, rev);
      for (let i = 0; i < 100 && Number(a.compact_revision) !== compactAt; i++) {
        await sleep(100);
        a = await hashKV(m.endpoint, rev);
      }
      answers.push(a);
    }
    for (const a of answers) {
      expect(Number(a.compact_revision)).to.equal(compactAt);
      expect(Number(a.hash_revision)).to.equal(0);
      expect(a.hash).to.equal(answers[0].hash);
    }
    const compacted = await hashKV(c.members[2].endpoint, compactAt - 1).then(() => undefined, (e: grpc.ServiceError) => e);
    expect(compacted?.code).to.equal(grpc.status.OUT_OF_RANGE);
    expect(compacted?.details).to.equal('etcdserver: mvcc: required revision has been compacted');
  });

  it('the gateway and etcdctl 3.4.23 `endpoint hashkv -w json` show compact_revision', async function () {
    const gw = await c.post(0, '/v3/maintenance/hashkv', { revision: 0 });
    expect(gw.status).to.equal(200);
    expect(gw.body.compact_revision).to.equal(String(compactAt));
    expect(gw.body).to.not.have.property('hash_revision');
    const out = await etcdctl(['endpoint', 'hashkv', '-w', 'json'], { endpoints: c.members.map((m) => m.endpoint) });
    expect(out.code, out.stderr).to.equal(0);
    const list = JSON.parse(out.stdout) as Array<{ Endpoint: string; HashKV: Msg }>;
    expect(list).to.have.length(3);
    for (const e of list) expect(e.HashKV.compact_revision).to.equal(compactAt);
  });
});

describe('HashKV of svc 3.4 has the reference 3.4.23\'s fields', function () {
  this.timeout(120000);
  let svc: SvcCluster;
  let ref: ReferenceCluster;
  before(async function () {
    [svc, ref] = await Promise.all([startSvcCluster({ size: 1, version: '3.4.34' }), startReferenceCluster({ size: 1 })]);
  });
  after(async () => Promise.all([svc?.close(), ref?.stop()]));
  printLogsOnFailure(() => [svc]);

  it('compact_revision after a compaction, no hash_revision; the same JSON keys as the reference', async function () {
    const s = await writeAndCompact((p, b) => svc.post(0, p, b));
    const r = await writeAndCompact((p, b) => postJson(ref.clientUrls[0] + p, b));
    expect(s).to.equal(r);
    // The reference 3.4 has no /v3/maintenance/hashkv gateway route (its Hash and HashKV share one): compare what
    // the real etcdctl prints of the gRPC answers.
    const show = async (endpoint: string) => {
      const out = await etcdctl(['endpoint', 'hashkv', '-w', 'json'], { endpoints: [endpoint] });
      expect(out.code, out.stderr).to.equal(0);
      return (JSON.parse(out.stdout) as Array<{ HashKV: Msg }>)[0].HashKV;
    };
    const sv = await show(svc.members[0].endpoint);
    const rv = await show(ref.endpoints[0]);
    expect(Object.keys(sv).sort()).to.deep.equal(Object.keys(rv).sort());
    expect(sv.compact_revision).to.equal(rv.compact_revision).and.to.equal(s);
    expect(sv).to.not.have.property('hash_revision');
    const gw = await svc.post(0, '/v3/maintenance/hashkv', { revision: 0 });
    expect(gw.body.compact_revision).to.equal(String(s));
    expect(gw.body).to.not.have.property('hash_revision');
  });
});
