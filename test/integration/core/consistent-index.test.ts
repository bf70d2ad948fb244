// The consistent index records the applied entry's term too, as the reference (3.5) keeps `consistent_index` and
// `term` in the meta bucket: it survives a restart of the db, and a snapshot in the reference's format carries
// the term for 3.5 (and leaves it out for 3.4, which has no such key).
import { expect } from 'chai';
import { join } from 'node:path';
import { openBackend, type Backend } from '../../../server/storage/backend.js';
import { V3StateMachine } from '../../../server/core/state-machine.js';
import { openBoltSnapshot } from '../../../server/cluster/bolt-snapshot.js';
import { readBolt } from '../../../server/storage/bbolt/reader.js';
import { nopLogger } from '../../../server/log/logger.js';
import { useTempDir } from '../../../harness/temp-dir.js';

const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

async function snapshotMeta(backend: Backend, metaTerm: boolean): Promise<Map<string, Buffer>> {
  const snap = await openBoltSnapshot(backend, { members: [], removed: [], alarms: [], metaTerm });
  const chunks: Buffer[] = [];
  for await (const c of snap.chunks) chunks.push(Buffer.from(c));
  snap.close();
  const meta = readBolt(Buffer.concat(chunks)).buckets.find((b) => b.name.toString() === 'meta');
  return new Map((meta?.kvs ?? []).map((kv) => [kv.key.toString(), kv.value]));
}

describe('consistent index and term', () => {
  const tmp = useTempDir('svc-cindex-');

  it('are the applied entry\'s index and term, kept across a reopen and in 3.5 snapshots', async () => {
    const path = join(tmp.path, 'db');
    const sm = new V3StateMachine(openBackend(nopLogger, path), { logger: nopLogger, electionMs: 1000 });
    sm.apply({ id: 1n, kind: 'put', put: { key: Buffer.from('a'), value: Buffer.from('1'), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } }, 7, 3);
    sm.apply({ id: 2n, kind: 'put', put: { key: Buffer.from('b'), value: Buffer.from('2'), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } }, 9, 4);
    expect([sm.consistentIndex(), sm.consistentTerm()]).to.deep.equal([9, 4]);
    sm.forceCommit();

    const m35 = await snapshotMeta(sm.currentBackend(), true);
    expect(m35.get('consistent_index')).to.deep.equal(u64(9));
    expect(m35.get('term')).to.deep.equal(u64(4));
    const m34 = await snapshotMeta(sm.currentBackend(), false);
    expect(m34.get('consistent_index')).to.deep.equal(u64(9));
    expect(m34.has('term')).to.equal(false);
    sm.close();

    const reopened = openBackend(nopLogger, path);
    try {
      expect([reopened.consistentIndex(), reopened.consistentTerm()]).to.deep.equal([9, 4]);
    } finally {
      reopened.close();
    }
  });
});
