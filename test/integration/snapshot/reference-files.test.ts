// Our bbolt reader on files the reference itself wrote: a real etcd 3.4.23 on loopback with large values,
// deletes and a compaction (so the file has free pages), its snapshot saved with the real etcdctl, then read
// here and compared with what etcdctl get and etcdctl snapshot status report.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { readBolt, checkBolt, unusedPages } from '../../../server/storage/bbolt/reader.js';
import { boltStatus } from '../../../server/cluster/bolt-snapshot.js';
import { bigValue, ctl, keySpace, latestKeys, leaseIds } from './helpers.js';
import { useTempDir } from '../../../harness/temp-dir.js';

describe('bbolt reader on files written by the reference', function () {
  this.timeout(240000);
  let ref: ReferenceCluster | undefined;
  const tmp = useTempDir('svc-bbolt-ref-');
  after(async () => {
    await ref?.stop();
  });

  it('reads every key, revision and lease of a reference snapshot taken after deletes and a compaction', async () => {
    ref = await startReferenceCluster({ size: 1 });
    const ep = ref.endpoints;
    for (let i = 0; i < 120; i++) await ctl(['put', `k/${String(i).padStart(3, '0')}`, `value-${i}`], ep);
    // values larger than a page (overflow pages), one rewritten so its old pages are freed
    await ctl(['put', 'big/a', bigValue(20000, 1)], ep);
    await ctl(['put', 'big/b', bigValue(90000, 2)], ep);
    await ctl(['put', 'big/a', bigValue(30000, 3)], ep);
    const lease = (await ctl(['lease', 'grant', '3600'], ep)).split(' ')[1];
    await ctl(['put', 'leased', 'x', `--lease=${lease}`], ep);
    await ctl(['del', 'k/0', '--prefix'], ep); // k/000 .. k/099
    const rev = (await keySpace(ep[0])).revision;
    await ctl(['compact', String(rev), '--physical'], ep);
    for (let i = 0; i < 20; i++) await ctl(['put', `after/${i}`, `v${i}`], ep);
    await ctl(['put', 'big/c', bigValue(5000, 4)], ep);

    const file = join(tmp.path, 'ref.db');
    await ctl(['snapshot', 'save', file], ep);
    const data = readFileSync(file);
    const db = data.subarray(0, data.length - 32);
    expect(checkBolt(db)).to.deep.equal([]);
    // the compaction and the rewritten values left free pages behind, which the reader must skip
    expect(unusedPages(db).length).to.be.greaterThan(0);

    // snapshot status as the reference computes it
    const st = JSON.parse(await ctl(['snapshot', 'status', file, '-w', 'json'])) as Record<string, number>;
    expect(boltStatus(data)).to.deep.equal({ hash: st.hash, revision: st.revision, totalKey: st.totalKey, totalSize: st.totalSize });

    // the newest revision of every key in the key bucket is what etcdctl get returns
    const file2 = readBolt(db);
    expect(file2.buckets.map((b) => b.name.toString())).to.include.members(['key', 'meta', 'lease', 'auth', 'authUsers', 'authRoles', 'members', 'members_removed', 'cluster', 'alarm']);
    const space = await keySpace(ep[0]);
    expect(latestKeys(file2)).to.deep.equal(space.keys);
    expect(st.revision).to.equal(space.revision);
    // the lease bucket holds the lease etcdctl lists (both as 16 hex digits, leading zeros kept)
    const leases = file2.buckets.find((b) => b.name.toString() === 'lease')!.kvs.map((kv) => kv.key.toString('hex'));
    expect(leases).to.deep.equal(await leaseIds(ep[0]));
  });
});
