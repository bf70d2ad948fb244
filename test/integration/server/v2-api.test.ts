// The legacy v2 keys API: served with --enable-v2=true (and by default in 3.3) with the reference's JSON shapes
// and headers; not served by default from 3.4 on (404), while /health, /metrics and the v3 gateway work.
import { expect } from 'chai';
import { httpRequest, printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { httpGet } from '../../../harness/process.js';

function v2(base: string, method: string, path: string, form?: Record<string, string>) {
  return httpRequest(`${base}${path}`, { method, ...(form ? { payload: new URLSearchParams(form).toString(), contentType: 'application/x-www-form-urlencoded' } : {}) });
}

describe('svc v2 keys API', function () {
  this.timeout(90000);
  let on: SvcCluster | undefined;
  let off34: SvcCluster | undefined;
  let off35: SvcCluster | undefined;
  let on33: SvcCluster | undefined;
  printLogsOnFailure(() => [on, off34, off35, on33]);
  before(async () => {
    [on, off34, off35, on33] = await Promise.all([
      startSvcCluster({ size: 1, version: '3.4.34', extraArgs: ['--enable-v2=true'] }),
      startSvcCluster({ size: 1, version: '3.4.34' }),
      startSvcCluster({ size: 1, version: '3.5.21' }),
      startSvcCluster({ size: 1, version: '3.3.27' }),
    ]);
  });
  after(async () => {
    await Promise.all([on, off34, off35, on33].map((c) => c?.close()));
  });

  it('--enable-v2=true serves PUT, GET and DELETE with the reference JSON shapes', async () => {
    const base = on!.members[0].clientURL;
    const created = await v2(base, 'PUT', '/v2/keys/foo', { value: 'bar' });
    expect(created.status).to.equal(201);
    expect(created.headers['content-type']).to.match(/^application\/json/);
    expect(created.headers['x-etcd-cluster-id']).to.match(/^[0-9a-f]+$/);
    expect(created.headers['x-etcd-index']).to.match(/^\d+$/);
    const i1 = (created.body.node as { modifiedIndex: number }).modifiedIndex;
    expect(created.body).to.deep.equal({ action: 'set', node: { key: '/foo', value: 'bar', modifiedIndex: i1, createdIndex: i1 } });
    expect(Number(created.headers['x-etcd-index'])).to.equal(i1);

    const updated = await v2(base, 'PUT', '/v2/keys/foo', { value: 'baz' });
    expect(updated.status).to.equal(200);
    const i2 = (updated.body.node as { modifiedIndex: number }).modifiedIndex;
    expect(i2).to.be.greaterThan(i1);
    expect(updated.body).to.deep.equal({
      action: 'set',
      node: { key: '/foo', value: 'baz', modifiedIndex: i2, createdIndex: i2 },
      prevNode: { key: '/foo', value: 'bar', modifiedIndex: i1, createdIndex: i1 },
    });

    const got = await v2(base, 'GET', '/v2/keys/foo');
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal({ action: 'get', node: { key: '/foo', value: 'baz', modifiedIndex: i2, createdIndex: i2 } });

    const deleted = await v2(base, 'DELETE', '/v2/keys/foo');
    expect(deleted.status).to.equal(200);
    const i3 = (deleted.body.node as { modifiedIndex: number }).modifiedIndex;
    expect(deleted.body).to.deep.equal({
      action: 'delete',
      node: { key: '/foo', modifiedIndex: i3, createdIndex: i2 },
      prevNode: { key: '/foo', value: 'baz', modifiedIndex: i2, createdIndex: i2 },
    });

    const missing = await v2(base, 'GET', '/v2/keys/foo');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ errorCode: 100, message: 'Key not found', cause: '/foo', index: i3 });
  });

  it('--enable-v2=true: directories list their children', async () => {
    const base = on!.members[0].clientURL;
    const dir = await v2(base, 'PUT', '/v2/keys/dir?dir=true');
    expect(dir.status).to.equal(201);
    const d = (dir.body.node as { modifiedIndex: number }).modifiedIndex;
    expect(dir.body).to.deep.equal({ action: 'set', node: { key: '/dir', dir: true, modifiedIndex: d, createdIndex: d } });
    const child = await v2(base, 'PUT', '/v2/keys/dir/a', { value: '1' });
    expect(child.status).to.equal(201);
    const a = (child.body.node as { modifiedIndex: number }).modifiedIndex;
    const listed = await v2(base, 'GET', '/v2/keys/dir?recursive=true');
    expect(listed.body).to.deep.equal({
      action: 'get',
      node: { key: '/dir', dir: true, nodes: [{ key: '/dir/a', value: '1', modifiedIndex: a, createdIndex: a }], modifiedIndex: d, createdIndex: d },
    });
  });

  it('3.3 serves the v2 API by default', async () => {
    const base = on33!.members[0].clientURL;
    const created = await v2(base, 'PUT', '/v2/keys/k33', { value: 'v' });
    expect(created.status).to.equal(201);
    expect((await v2(base, 'GET', '/v2/keys/k33')).body.node).to.include({ key: '/k33', value: 'v' });
  });

  for (const [label, get] of [
    ['3.4', () => off34!],
    ['3.5', () => off35!],
  ] as const) {
    it(`${label} without --enable-v2: v2 paths answer 404 while /health, /metrics and the v3 gateway work`, async () => {
      const c = get();
      const base = c.members[0].clientURL;
      expect((await v2(base, 'PUT', '/v2/keys/foo', { value: 'bar' })).status).to.equal(404);
      expect((await v2(base, 'GET', '/v2/keys/foo')).status).to.equal(404);
      expect((await v2(base, 'GET', '/v2/keys')).status).to.equal(404);
      const health = await httpGet(`${base}/health`);
      expect(health.status).to.equal(200);
      expect(JSON.parse(health.body).health).to.equal('true');
      const metrics = await httpGet(`${base}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(metrics.body).to.match(/^svc_server_is_leader 1$/m);
      await c.put(0, 'v3/still-works', 'yes');
      expect(await c.get(0, 'v3/still-works')).to.equal('yes');
    });
  }
});
