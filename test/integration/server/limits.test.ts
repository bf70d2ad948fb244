// Request and space limits of a svc member: a database past --quota-backend-bytes raises the NOSPACE alarm and
// refuses writes while reads and deletes still work; a request over --max-request-bytes is refused and
// nothing is written. Checked through the JSON gateway and through the reference client (gRPC).
import { expect } from 'chai';
import { etcdctl } from '../../../harness/etcdctl.js';
import { b64, prefixEnd, useSvcClusters } from '../../../harness/svc-cluster.js';
import { httpGet } from '../../../harness/process.js';

const NOSPACE = 'etcdserver: mvcc: database space exceeded';
const TOO_LARGE = 'etcdserver: request is too large';

describe('svc member limits', function () {
  this.timeout(120000);
  const clusters = useSvcClusters();

  it('NOSPACE: past --quota-backend-bytes writes fail, the alarm is listed, reads and deletes work', async () => {
    // The empty lmdb file is about 44 KiB; 256 KiB is passed after a few dozen 8 KiB values.
    const c = await clusters.start({ size: 3, extraArgs: ['--quota-backend-bytes=262144'] });
    const value = 'x'.repeat(8192);
    let acked = 0;
    let refusal: { status: number; body: Record<string, unknown> } | undefined;
    for (let n = 0; n < 400 && !refusal; n++) {
      const a = await c.post(n % 3, '/v3/kv/put', { key: b64(`quota/k${String(n).padStart(4, '0')}`), value: b64(value) });
      if (a.status === 200) acked++;
      else refusal = a;
    }
    expect(refusal, 'no write was refused within 400 puts of 8 KiB').to.not.equal(undefined);
    expect(acked).to.be.greaterThan(0);
    expect(refusal!.body.error).to.equal(NOSPACE);
    expect(refusal!.body.code, 'gRPC code ResourceExhausted').to.equal(8);

    // Every member lists the alarm and refuses writes, also through gRPC.
    for (let i = 0; i < 3; i++) {
      const alarms = await c.post(i, '/v3/maintenance/alarm', { action: 'GET' });
      expect(alarms.status, alarms.text).to.equal(200);
      const listed = ((alarms.body.alarms as Array<{ alarm?: string; memberID?: string }>) ?? []).filter((x) => x.alarm === 'NOSPACE');
      expect(listed, `NOSPACE alarms on ${c.members[i].name}: ${alarms.text}`).to.have.length.greaterThan(0);
      expect(listed[0].memberID).to.match(/^[1-9][0-9]*$/);
      const put = await c.post(i, '/v3/kv/put', { key: b64('quota/more'), value: b64('small') });
      expect(put.body.error, `small put on ${c.members[i].name}`).to.equal(NOSPACE);
    }
    const viaGrpc = await etcdctl(['put', 'quota/grpc', 'v'], { endpoints: [c.members[1].endpoint] });
    expect(viaGrpc.code).to.not.equal(0);
    expect(viaGrpc.stderr).to.include(NOSPACE);
    const listed = await etcdctl(['alarm', 'list'], { endpoints: [c.members[2].endpoint] });
    expect(listed.stdout).to.match(/alarm:NOSPACE/);
    const health = await httpGet(`${c.members[0].clientURL}/health`);
    expect(health.status, '/health while NOSPACE is raised').to.equal(503);

    // Reads and deletes still work.
    expect(await c.get(2, 'quota/k0000')).to.equal(value);
    const del = await c.post(0, '/v3/kv/deleterange', { key: b64('quota/k0000') });
    expect(del.status, del.text).to.equal(200);
    expect(del.body.deleted).to.equal('1');
    expect(await c.get(1, 'quota/k0000')).to.equal(undefined);
    expect(await c.get(1, 'quota/more')).to.equal(undefined);

    // The documented way out: free space (delete, compact, defragment every member), disarm, write again.
    const wiped = await c.post(1, '/v3/kv/deleterange', { key: b64('quota/'), range_end: b64(prefixEnd('quota/')) });
    expect(wiped.status, wiped.text).to.equal(200);
    const rev = (wiped.body.header as { revision: string }).revision;
    const compacted = await c.post(0, '/v3/kv/compaction', { revision: rev, physical: true });
    expect(compacted.status, compacted.text).to.equal(200);
    for (let i = 0; i < 3; i++) {
      const defrag = await c.post(i, '/v3/maintenance/defragment', {}, 30000);
      expect(defrag.status, defrag.text).to.equal(200);
    }
    const memberID = ((await c.post(0, '/v3/maintenance/alarm', { action: 'GET' })).body.alarms as Array<{ memberID: string }>)[0].memberID;
    const disarm = await c.post(2, '/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID, alarm: 'NOSPACE' });
    expect(disarm.status, disarm.text).to.equal(200);
    for (let i = 0; i < 3; i++) {
      await c.put(i, `quota/again${i}`, 'fits');
      expect((await c.post(i, '/v3/maintenance/alarm', { action: 'GET' })).body.alarms ?? []).to.deep.equal([]);
    }
    await c.waitHealthy();
  });

  it('a defragment sent right after a compaction waits for it, so the file shrinks', async () => {
    const c = await clusters.start({ size: 1 });
    // 30000 entries: the background compaction deletes them in 30 batches, yielding between batches
    const value = b64('y'.repeat(100));
    for (let t = 0; t < 300; t++) {
      const success = Array.from({ length: 100 }, (_, i) => ({ request_put: { key: b64(`big/${t}/${i}`), value } }));
      const a = await c.post(0, '/v3/kv/txn', { success });
      expect(a.status, a.text).to.equal(200);
    }
    const wiped = await c.post(0, '/v3/kv/deleterange', { key: b64('big/'), range_end: b64(prefixEnd('big/')) });
    const rev = (wiped.body.header as { revision: string }).revision;
    const before = Number((await c.post(0, '/v3/maintenance/status', {})).body.dbSize);
    expect(before).to.be.greaterThan(3 * 1024 * 1024);
    // not physical: the answer comes before the deletes are done, and the defragment follows at once
    expect((await c.post(0, '/v3/kv/compaction', { revision: rev })).status).to.equal(200);
    const defrag = await c.post(0, '/v3/maintenance/defragment', {}, 30000);
    expect(defrag.status, defrag.text).to.equal(200);
    const after = Number((await c.post(0, '/v3/maintenance/status', {})).body.dbSize);
    expect(after, `db size ${before} -> ${after}`).to.be.lessThan(1024 * 1024);
  });

  it('a request over --max-request-bytes is refused with "request is too large" and nothing is written', async () => {
    const c = await clusters.start({ size: 1, extraArgs: ['--max-request-bytes=1024'] });
    const big = 'y'.repeat(4096);
    const a = await c.post(0, '/v3/kv/put', { key: b64('big/http'), value: b64(big) });
    expect(a.status).to.equal(400);
    expect(a.body).to.deep.equal({ error: TOO_LARGE, message: TOO_LARGE, code: 3 });
    const viaGrpc = await etcdctl(['put', 'big/grpc', big], { endpoints: [c.members[0].endpoint] });
    expect(viaGrpc.code).to.not.equal(0);
    expect(viaGrpc.stderr).to.include(TOO_LARGE);
    expect(await c.get(0, 'big/http')).to.equal(undefined);
    expect(await c.get(0, 'big/grpc')).to.equal(undefined);
    expect(await c.range(0, 'big/')).to.deep.equal([]);
    // A request under the limit still works.
    await c.put(0, 'big/small', 'ok');
    expect(await c.get(0, 'big/small')).to.equal('ok');
  });
});
