// Snapshots between svc and the reference 3.5 (etcd, etcdutl, etcdctl v3.5.21, built from the Go module proxy by
// scripts/build-reference.sh 3.5 in npm test's pretest). 3.5 moved `snapshot status/restore` to etcdutl and adds
// meta keys of its own (term, confState), so the 3.4 tests of reference-tools and migration do not cover it:
// (a) svc's snapshot -> etcdutl status and restore -> a real 3.5 cluster serves it all;
// (b) a real 3.5 cluster's snapshot (its etcdctl) -> svcctl restore -> svc serves it all.
import { expect } from 'chai';
import { join } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { spawnLogged } from '../../../harness/process.js';
import { ref35, startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useSvcClusters } from '../../../harness/svc-cluster.js';
import { useTempDir } from '../../../harness/temp-dir.js';
import { appHistory, bigValue, compactBack, ctl, grantLease, keySpace, leaseIds, restoreAndStart, restoreIntoSvc, svcctl, type KeySpace, type RestoredCluster } from './helpers.js';

/** Checked run of a reference 3.5 tool (etcdutl or etcdctl); throws with its stderr unless it exits 0. */
async function tool(name: 'etcdutl' | 'etcdctl', args: string[], endpoints?: string[]): Promise<string> {
  const r = await etcdctl(args, { bin: ref35(name), endpoints, timeoutMs: 60000 });
  expect(r.code, `${name} ${args.join(' ')}: ${r.stderr}`).to.equal(0);
  return r.stdout;
}

/** `etcdutl snapshot restore` into n new members, then the reference 3.5 etcd on them. */
function restoreInto35(snapshot: string, dir: string, n: number): Promise<RestoredCluster> {
  return restoreAndStart(snapshot, dir, n, 'ref35-', async (args) => void (await tool('etcdutl', args)), (name, flags, logFile) => spawnLogged(ref35('etcd'), flags, { logFile, name }));
}

/** Same keys with the same values, create/mod revisions, versions and leases, at the same revision. */
function expectSameSpace(got: KeySpace, want: KeySpace): void {
  expect(got.revision).to.equal(want.revision);
  expect([...got.keys].sort()).to.deep.equal([...want.keys].sort());
}

describe('snapshots with the reference 3.5 (etcdutl, etcd v3.5.21)', function () {
  this.timeout(400000);
  const clusters = useSvcClusters();
  const stopLater = useCleanup({ closeAfter: 'each' });
  const tmp = useTempDir('svc-snap-ref35-');

  it('etcdutl snapshot status and restore work on svc\'s snapshot; the restored 3.5 cluster serves all of it', async () => {
    const svc = await clusters.start({ size: 3, version: '3.5.21' });
    const ep = [svc.members[0].endpoint];
    for (let i = 0; i < 80; i++) await ctl(['put', `k/${String(i).padStart(2, '0')}`, `value-${i}`], ep);
    await ctl(['put', 'big', bigValue(50000, 3)], ep);
    await ctl(['put', 'k/01', 'rewritten'], ep);
    await ctl(['del', 'k/7', '--prefix'], ep);
    await compactBack(ep, 3);
    const lease = await grantLease(ep, 3600);
    await ctl(['put', 'leased', 'x', `--lease=${lease}`], ep);
    await ctl(['user', 'add', 'alice', '--new-user-password=pw'], ep);
    const before = await keySpace(ep[0]);

    const file = join(tmp.path, 'svc.db');
    const saved = await svcctl([`--endpoints=${ep[0]}`, 'snapshot', 'save', file]);
    expect(saved.code, saved.err).to.equal(0);
    const st = JSON.parse(await tool('etcdutl', ['snapshot', 'status', file, '-w', 'json'])) as { revision: number; totalKey: number };
    expect(st.revision).to.equal(before.revision);
    const ours = await svcctl(['snapshot', 'status', file, '-w', 'json']);
    expect(ours.code, ours.err).to.equal(0);
    const ourSt = JSON.parse(ours.out) as { revision: number; totalKey: number };
    expect(ourSt.revision).to.equal(st.revision);
    expect(ourSt.totalKey).to.equal(st.totalKey);

    const ref35Cluster = stopLater(await restoreInto35(file, join(tmp.path, 'restored'), 3));
    for (const e of ref35Cluster.endpoints) expectSameSpace(await keySpace(e), before);
    expect(await leaseIds(ref35Cluster.endpoints[0])).to.deep.equal([lease]);
    expect(await ctl(['user', 'list'], ref35Cluster.endpoints)).to.equal('alice\n');
    // the restored cluster goes on from the saved revision
    await ctl(['put', 'after', 'restore'], ref35Cluster.endpoints);
    expect((await keySpace(ref35Cluster.endpoints[1])).revision).to.equal(before.revision + 1);
  });

  it('svcctl snapshot restore takes a snapshot of a real 3.5 cluster (its etcdctl); svc serves all of it', async () => {
    const ref = stopLater(await startReferenceCluster({ size: 1, binary: ref35('etcd') }));
    const ep = ref.endpoints;
    const lease = await appHistory(ep, { keys: 80, blobSeed: 9, rewrites: 20, deleted: '7', back: 5 });
    const before = await keySpace(ep[0]);

    const file = join(tmp.path, 'from-ref35.db');
    await tool('etcdctl', ['snapshot', 'save', file], ep);
    const st = JSON.parse(await tool('etcdutl', ['snapshot', 'status', file, '-w', 'json'])) as { revision: number; totalKey: number };
    const ours = await svcctl(['snapshot', 'status', file, '-w', 'json']);
    expect(ours.code, ours.err).to.equal(0);
    const ourSt = JSON.parse(ours.out) as { revision: number; totalKey: number };
    expect([ourSt.revision, ourSt.totalKey]).to.deep.equal([st.revision, st.totalKey]);

    const svc = stopLater(await restoreIntoSvc(file, join(tmp.path, 'svc'), 3, '3.5.21'));
    for (const e of svc.endpoints) expectSameSpace(await keySpace(e), before);
    expect(await leaseIds(svc.endpoints[0])).to.deep.equal([lease]);
    expect(await ctl(['user', 'get', 'bob'], svc.endpoints)).to.equal('User: bob\nRoles: writer\n');
    await ctl(['put', 'written/on/svc', 'yes'], svc.endpoints);
    expect((await keySpace(svc.endpoints[2])).revision).to.equal(before.revision + 1);
  });
});
