// The migration the docs describe (docs/migration.md), end to end with the reference 3.4.23 binaries: data
// written to a running reference cluster, its snapshot (etcdctl) restored into svc members (svcctl), every key
// and revision checked on svc; then svc's snapshot restored into the reference and checked again. Also: a
// 3.5-style snapshot (extra meta keys) and svc's older lmdb snapshots still restore.
import { expect } from 'chai';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { startReferenceCluster, etcdctl, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { readBolt } from '../../../server/storage/bbolt/reader.js';
import { writeBolt } from '../../../server/storage/bbolt/writer.js';
import { appHistory, ctl, keySpace, leaseIds, restoreIntoReference, restoreIntoSvc, svcctl, type KeySpace, type RestoredCluster } from './helpers.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useTempDir } from '../../../harness/temp-dir.js';

function withDigest(db: Buffer): Buffer {
  return Buffer.concat([db, createHash('sha256').update(db).digest()]);
}

describe('migration: reference -> svc -> reference', function () {
  this.timeout(400000);
  const stopLater = useCleanup();
  let ref: ReferenceCluster | undefined;
  /** The first svc cluster, restored from the reference's snapshot. */
  let migrated: RestoredCluster;
  let refSnapshot: string;
  let refSpace: KeySpace;
  let lease: string;
  const tmp = useTempDir('svc-migrate-');

  it('moves a reference cluster onto svc and back with every key, revision, lease and user', async () => {
    ref = stopLater(await startReferenceCluster({ size: 3 }));
    const ep = ref.endpoints;
    lease = await appHistory(ep, { keys: 100, blobSeed: 7, rewrites: 30, deleted: '9', back: 10 });
    refSpace = await keySpace(ep[0]);

    // 1. snapshot the running reference cluster
    refSnapshot = join(tmp.path, 'from-reference.db');
    await ctl(['snapshot', 'save', refSnapshot], [ep[0]]);
    const refStatus = JSON.parse(await ctl(['snapshot', 'status', refSnapshot, '-w', 'json'])) as Record<string, number>;
    const ourStatus = await svcctl(['snapshot', 'status', refSnapshot, '-w', 'json']);
    expect(JSON.parse(ourStatus.out)).to.deep.equal(refStatus);

    // 2. restore it into three svc members and start them
    const svc = stopLater(await restoreIntoSvc(refSnapshot, join(tmp.path, 'svc'), 3));
    migrated = svc;
    for (const e of svc.endpoints) {
      const got = await keySpace(e);
      expect(got.revision).to.equal(refSpace.revision);
      expect([...got.keys].sort()).to.deep.equal([...refSpace.keys].sort());
    }
    expect(await leaseIds(svc.endpoints[0])).to.deep.equal([lease]);
    expect(await ctl(['user', 'get', 'bob'], svc.endpoints)).to.equal('User: bob\nRoles: writer\n');
    expect(await ctl(['role', 'get', 'writer'], svc.endpoints)).to.equal('Role writer\nKV Read:\n\t[app/, app0) (prefix app/)\nKV Write:\n\t[app/, app0) (prefix app/)\n');
    await ctl(['put', 'written/on/svc', 'yes'], svc.endpoints);
    const svcSpace = await keySpace(svc.endpoints[1]);
    expect(svcSpace.revision).to.equal(refSpace.revision + 1);

    // 3. and back: svc's snapshot restored into a new reference cluster
    const svcSnapshot = join(tmp.path, 'from-svc.db');
    const saved = await svcctl([`--endpoints=${svc.endpoints[0]}`, 'snapshot', 'save', svcSnapshot]);
    expect(saved.code, saved.err).to.equal(0);
    const back = stopLater(await restoreIntoReference(svcSnapshot, join(tmp.path, 'back'), 1));
    const got = await keySpace(back.endpoints[0]);
    expect(got.revision).to.equal(svcSpace.revision);
    expect([...got.keys].sort()).to.deep.equal([...svcSpace.keys].sort());
    expect(await leaseIds(back.endpoints[0])).to.deep.equal([lease]);
    expect(await ctl(['user', 'get', 'bob'], back.endpoints)).to.equal('User: bob\nRoles: writer\n');
  });

  it('passwords move both ways: authentication on, users log in with the same passwords after each restore', async () => {
    const ep = ref!.endpoints;
    await ctl(['user', 'add', 'root', '--new-user-password=rootpw'], ep);
    await ctl(['user', 'grant-role', 'root', 'root'], ep);
    await ctl(['auth', 'enable'], ep);
    const rootEnv = { ETCDCTL_USER: 'root:rootpw' };
    const snap = join(tmp.path, 'auth-reference.db');
    await ctl(['snapshot', 'save', snap], [ep[0]], rootEnv);
    const svc = stopLater(await restoreIntoSvc(snap, join(tmp.path, 'svc-auth'), 1));
    expect(await ctl(['get', 'app/1', '--print-value-only'], svc.endpoints, { ETCDCTL_USER: 'bob:pw' })).to.equal('v1-2\n');
    const wrong = await etcdctl(['get', 'app/1'], { endpoints: svc.endpoints, env: { ETCDCTL_USER: 'bob:nope' } });
    expect(wrong.stderr).to.match(/authentication failed/);
    // a user created on svc, then svc's snapshot into the reference
    await ctl(['user', 'add', 'dave', '--new-user-password=davepw'], svc.endpoints, rootEnv);
    await ctl(['user', 'grant-role', 'dave', 'writer'], svc.endpoints, rootEnv);
    const back = join(tmp.path, 'auth-svc.db');
    const saved = await svcctl([`--endpoints=${svc.endpoints[0]}`, '--user=root:rootpw', 'snapshot', 'save', back]);
    expect(saved.code, saved.err).to.equal(0);
    const refBack = stopLater(await restoreIntoReference(back, join(tmp.path, 'ref-auth'), 1));
    expect(await ctl(['put', 'app/from-dave', 'x'], refBack.endpoints, { ETCDCTL_USER: 'dave:davepw' })).to.equal('OK\n');
    expect(await ctl(['get', 'app/1', '--print-value-only'], refBack.endpoints, { ETCDCTL_USER: 'bob:pw' })).to.equal('v1-2\n');
    expect(await ctl(['user', 'list'], refBack.endpoints, rootEnv)).to.equal('bob\ndave\nroot\n');
  });

  it('restores a snapshot with the meta keys the reference 3.5 adds (term, confState)', async () => {
    const data = readFileSync(refSnapshot);
    const file = readBolt(data.subarray(0, data.length - 32));
    const buckets = file.buckets.map((b) => ({ name: b.name, kvs: b.kvs.map((kv) => ({ key: kv.key, value: kv.value })) }));
    const meta = buckets.find((b) => b.name.toString() === 'meta')!;
    const term = Buffer.alloc(8);
    term.writeBigUInt64BE(5n);
    meta.kvs.push({ key: Buffer.from('term'), value: term }, { key: Buffer.from('confState'), value: Buffer.from('{"voters":[1,2,3],"auto_leave":false}') });
    const snap35 = join(tmp.path, 'reference-3.5.db');
    writeFileSync(snap35, withDigest(writeBolt(buckets)));
    const svc = stopLater(await restoreIntoSvc(snap35, join(tmp.path, 'svc35'), 1, '3.5.21'));
    const got = await keySpace(svc.endpoints[0]);
    expect(got.revision).to.equal(refSpace.revision);
    expect([...got.keys].sort()).to.deep.equal([...refSpace.keys].sort());
  });

  it('still restores svc\'s older snapshots (its lmdb database file)', async () => {
    // a member's own db file is what svc's snapshots held before they were in the reference's format
    await migrated.processes[2].stop();
    const dbFile = join(tmp.path, 'svc', 'svc2', 'member', 'snap', 'db');
    const old = join(tmp.path, 'old-lmdb.db');
    copyFileSync(dbFile, old);
    writeFileSync(old, withDigest(readFileSync(old)));
    expect(readFileSync(old).readUInt32LE(16)).to.not.equal(0xed0cdaed);
    const svc = stopLater(await restoreIntoSvc(old, join(tmp.path, 'svc-old'), 1));
    const got = await keySpace(svc.endpoints[0]);
    expect(got.keys.get(Buffer.from('written/on/svc').toString('base64'))?.value).to.equal(Buffer.from('yes').toString('base64'));
    expect(got.revision).to.equal(refSpace.revision + 1);
    const st = await svcctl(['snapshot', 'status', old, '-w', 'json']);
    expect(st.code, st.err).to.equal(0);
    expect((JSON.parse(st.out) as { revision: number }).revision).to.equal(refSpace.revision + 1);
  });
});
