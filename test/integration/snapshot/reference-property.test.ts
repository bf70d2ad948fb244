// Property test of our bbolt reader and writer against the reference's own files and tools: random workloads
// (puts of small, page-sized and multi-page values, rewrites, deletes of keys and ranges, leases granted, attached
// and revoked, physical compactions, binary keys) run on a real etcd 3.4.23; after each, its snapshot (etcdctl) must
// read back as exactly what etcdctl get reports, with the reference's own status, and our rewrite of that file
// must pass the reference's `snapshot status` with the same hash and `snapshot restore`.
import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { useTempDir } from '../../../harness/temp-dir.js';
import { boltStatus } from '../../../server/cluster/bolt-snapshot.js';
import { Client } from '../../../server/client/client.js';
import { checkBolt, readBolt } from '../../../server/storage/bbolt/reader.js';
import { writeBolt } from '../../../server/storage/bbolt/writer.js';
import { ctl, keySpace, latestKeys, leaseIds } from './helpers.js';

type Op =
  | { kind: 'put'; key: number; size: number; binary: boolean; lease: boolean }
  | { kind: 'del'; key: number; range: boolean }
  | { kind: 'grant' }
  | { kind: 'revoke'; which: number }
  | { kind: 'compact'; back: number };

// Value sizes around bbolt's 4 KiB page: inline, a page or two, and many overflow pages.
const size = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) }, { weight: 2, arbitrary: fc.integer({ min: 3000, max: 9000 }) }, { weight: 1, arbitrary: fc.integer({ min: 20000, max: 150000 }) });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('put' as const), key: fc.nat(60), size, binary: fc.boolean(), lease: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('del' as const), key: fc.nat(60), range: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('grant' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), which: fc.nat(10) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), back: fc.nat(20) }) },
);

function keyOf(run: number, n: number, binary: boolean): Buffer {
  const k = Buffer.from(`p${run}/k${String(n).padStart(2, '0')}`);
  return binary ? Buffer.concat([k, Buffer.from([0, 0xff, n])]) : k;
}

function valueOf(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (seed * 31 + i * 7) & 0xff;
  return b;
}

describe('bbolt format: property test against the reference\'s files and tools', function () {
  this.timeout(600000);
  let ref: ReferenceCluster | undefined;
  let client: Client | undefined;
  const tmp = useTempDir('svc-bbolt-prop-');
  after(async () => {
    client?.close();
    await ref?.stop();
  });

  it('every random workload\'s reference snapshot reads back as etcdctl sees it, and our rewrite of it satisfies the reference', async () => {
    ref = await startReferenceCluster({ size: 1 });
    const ep = ref.endpoints[0];
    client = await Client.connect({ endpoints: [ep], waitForConnection: true, dialTimeoutMs: 10000, commandTimeoutMs: 30000 });
    const c = client;
    let run = 0;
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 40, maxLength: 160, size: "max" }), async (ops) => {
        run++;
        const leases: string[] = [];
        for (const [i, o] of ops.entries()) {
          if (o.kind === 'put') {
            const lease = o.lease && leases.length > 0 ? leases[i % leases.length] : undefined;
            await c.put(keyOf(run, o.key, o.binary), valueOf(o.size, i), lease ? { lease } : {});
          } else if (o.kind === 'del') {
            const key = keyOf(run, o.key, false);
            await c.delete(key, o.range ? { rangeEnd: keyOf(run, o.key + 10, false) } : {});
          } else if (o.kind === 'grant') {
            leases.push(String((await c.grant(3600)).ID));
          } else if (o.kind === 'revoke') {
            if (leases.length > 0) await c.revoke(leases.splice(o.which % leases.length, 1)[0]);
          } else {
            const rev = Number((await c.get('x')).header.revision) - o.back;
            if (rev > compacted) {
              await c.compact(rev, true);
              compacted = rev;
            }
          }
        }

        const file = join(tmp.path, `ref-${run}.db`);
        await ctl(['snapshot', 'save', file], [ep]);
        const data = readFileSync(file);
        const db = data.subarray(0, data.length - 32);
        expect(checkBolt(db)).to.deep.equal([]);
        const status = JSON.parse(await ctl(['snapshot', 'status', file, '-w', 'json'])) as Record<string, number>;
        expect(boltStatus(data)).to.deep.equal({ hash: status.hash, revision: status.revision, totalKey: status.totalKey, totalSize: status.totalSize });

        // the newest revision of every live key is what etcdctl get reports; the lease bucket is what it lists
        const read = readBolt(db);
        const space = await keySpace(ep);
        expect(latestKeys(read)).to.deep.equal(space.keys);
        const leaseBucket = read.buckets.find((b) => b.name.toString() === 'lease')!;
        expect(leaseBucket.kvs.map((kv) => kv.key.toString('hex'))).to.deep.equal(await leaseIds(ep));

        // our writer: the same buckets in a file of our own layout, which the reference's tools accept
        const ours = writeBolt(read.buckets.map((b) => ({ name: b.name, kvs: b.kvs })));
        const oursFile = join(tmp.path, `ours-${run}.db`);
        writeFileSync(oursFile, Buffer.concat([ours, createHash('sha256').update(ours).digest()]));
        const oursStatus = JSON.parse(await ctl(['snapshot', 'status', oursFile, '-w', 'json'])) as Record<string, number>;
        expect({ hash: oursStatus.hash, revision: oursStatus.revision, totalKey: oursStatus.totalKey }).to.deep.equal({ hash: status.hash, revision: status.revision, totalKey: status.totalKey });
        const dataDir = join(tmp.path, `restored-${run}`);
        await ctl(['snapshot', 'restore', oursFile, `--data-dir=${dataDir}`, '--name=r', '--initial-cluster=r=http://127.0.0.1:1', '--initial-advertise-peer-urls=http://127.0.0.1:1']);
        // the reference rewrote our file through its own storage library on restore; we read its result back
        const restored = readFileSync(join(dataDir, 'member', 'snap', 'db'));
        expect(checkBolt(restored)).to.deep.equal([]);
        expect(latestKeys(readBolt(restored))).to.deep.equal(space.keys);
      }),
      { numRuns: 10, seed: 20261124, endOnFailure: true },
    );
  });
});
