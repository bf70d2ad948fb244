// svc's snapshots in the reference's format: the reference's own etcdctl 3.4.23 reads them (`snapshot status`)
// and restores them (`snapshot restore`) into a real reference cluster that serves every key with the same
// value and revisions, the leases and the auth users and roles.
import { expect } from 'chai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { useCleanup } from '../../../harness/cleanup.js';
import { useSvcClusters } from '../../../harness/svc-cluster.js';
import { bigValue, compactBack, ctl, grantLease, keySpace, leaseIds, restoreIntoReference, svcctl, userWithRole } from './helpers.js';
import { useTempDir } from '../../../harness/temp-dir.js';

describe('svc snapshots with the reference\'s tools', function () {
  this.timeout(300000);
  const clusters = useSvcClusters({ closeAfter: 'all' });
  const stopLater = useCleanup();
  const tmp = useTempDir('svc-snap-ref-');

  it('etcdctl snapshot status and restore work on svc\'s snapshot; the restored reference cluster serves all of it', async () => {
    const cluster = await clusters.start({ size: 3, version: '3.4.34' });
    const ep = [cluster.members[0].endpoint];
    for (let i = 0; i < 150; i++) await ctl(['put', `k/${String(i).padStart(3, '0')}`, `value-${i}`], ep);
    await ctl(['put', 'big/a', bigValue(20000, 1)], ep);
    await ctl(['put', 'big/b', bigValue(100000, 2)], ep);
    await ctl(['put', 'k/001', 'rewritten'], ep);
    await ctl(['del', 'k/01', '--prefix'], ep);
    await compactBack(ep, 3);
    const lease = await grantLease(ep, 3600);
    await ctl(['put', 'leased/1', 'x', `--lease=${lease}`], ep);
    await ctl(['put', 'leased/2', 'y', `--lease=${lease}`], ep);
    await userWithRole(ep, 'alice', 'reader', 'read', 'k/');
    const before = await keySpace(ep[0]);

    const file = join(tmp.path, 'svc.db');
    const saved = await svcctl([`--endpoints=${ep[0]}`, 'snapshot', 'save', file]);
    expect(saved.code, saved.err).to.equal(0);
    expect(statSync(file).size % 512).to.equal(32);
    // the reference's etcdctl saves the same stream
    const viaRef = join(tmp.path, 'via-etcdctl.db');
    await ctl(['snapshot', 'save', viaRef], ep);

    const st = JSON.parse(await ctl(['snapshot', 'status', file, '-w', 'json'])) as Record<string, number>;
    expect(st.revision).to.equal(before.revision);
    const ours = await svcctl(['snapshot', 'status', file, '-w', 'json']);
    expect(ours.code, ours.err).to.equal(0);
    expect(JSON.parse(ours.out)).to.deep.equal(st);
    const st2 = JSON.parse(await ctl(['snapshot', 'status', viaRef, '-w', 'json'])) as Record<string, number>;
    expect(st2.revision).to.equal(before.revision);

    const restored = stopLater(await restoreIntoReference(file, tmp.path, 3));
    const after = await keySpace(restored.endpoints[0]);
    expect(after.revision).to.equal(before.revision);
    expect([...after.keys].sort()).to.deep.equal([...before.keys].sort());
    expect(await leaseIds(restored.endpoints[0])).to.deep.equal([lease]);
    const ttl = await ctl(['lease', 'timetolive', lease, '--keys'], restored.endpoints);
    // the reference lists a lease's keys in Go map order: any order
    expect(ttl).to.match(/attached keys\(\[(leased\/1 leased\/2|leased\/2 leased\/1)\]\)/);
    expect(await ctl(['user', 'list'], restored.endpoints)).to.equal('alice\n');
    expect(await ctl(['user', 'get', 'alice'], restored.endpoints)).to.equal('User: alice\nRoles: reader\n');
    expect(await ctl(['role', 'get', 'reader'], restored.endpoints)).to.equal('Role reader\nKV Read:\n\t[k/, k0) (prefix k/)\nKV Write:\n');
    // the restored cluster goes on from the saved revision
    await ctl(['put', 'after', 'restore'], restored.endpoints);
    expect((await keySpace(restored.endpoints[1])).revision).to.equal(before.revision + 1);
  });
});
