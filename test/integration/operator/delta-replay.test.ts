// Continuous backup's groundwork against real svc members: a snapshot at R0, then puts, overwrites, a single delete,
// a range delete and a multi-key transaction up to R1; the changes R0+1..R1 read back by a watch, grouped by revision,
// written as a delta segment and read again; replayed into a lone member restored from the snapshot, one
// transaction per revision: every revision keeps its number, and the KV hash at R1 is the source's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { decodeSegment, encodeSegment, makeSegment } from '../../../operator/backup/delta.js';
import { readChanges, replayChanges, ReplayError } from '../../../operator/runtime/delta-replay.js';
import { startScratchMember, type ScratchMember } from '../../../operator/runtime/local/drill.js';
import { DEFAULT_SVC_ENTRY } from '../../../operator/runtime/local/index.js';
import { waitFor } from '../../../harness/process.js';
import { useLocalRuntime } from './local-fixture.js';

describe('operator: delta segments replayed into a restored member keep revisions and the KV hash', function () {
  this.timeout(90_000);
  const { rt, mc } = useLocalRuntime('delta');
  const dir = mkdtempSync(join(tmpdir(), 'svc-delta-'));
  let source: Client | undefined;
  let replica: Client | undefined;
  let scratch: ScratchMember | undefined;
  after(async () => {
    source?.close();
    replica?.close();
    await scratch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('snapshot at R0, writes to R1, segment, replay: the same revisions, keys and HashKV at R1', async () => {
    await rt.createCluster(withDefaults({ version: '3.5.21', replicas: 1 }));
    const m = (await rt.members())[0];
    await waitFor('the member healthy', async () => ((await mc.healthy(m.clientURL)) ? true : undefined), 30_000, 100);
    source = await Client.connect({ endpoints: [m.clientURL] });
    for (let i = 0; i < 10; i++) await source.put(`k/${i}`, `v${i}`);
    const snap = await mc.snapshot(m.clientURL, m.name, join(dir, 'base.db'));
    const r0 = snap.revision;

    const t0 = new Date();
    let rev = r0;
    const step = async (p: Promise<{ header: { revision: string } }>) => {
      const r = Number((await p).header.revision);
      // a write (single, or a transaction of several) is exactly one revision
      expect(r).to.equal(rev + 1);
      rev = r;
    };
    await step(source.put('k/1', 'changed'));
    await step(source.delete('k/2'));
    await step(source.delete('k/5', { prefix: true })); // one key, but through a range
    await step(source.delete('k/6', { rangeEnd: 'k/9' })); // k/6, k/7, k/8 in one revision
    await step(source.txn({ success: [{ put: { key: 'k/a', value: 'A' } }, { put: { key: 'k/b', value: 'B' } }, { delete: { key: 'k/3' } }] }));
    await step(source.put('k/2', 'back')); // a key created again
    await step(source.put('bin/\u0000\u00ff', Buffer.from([0, 1, 2, 255])));
    const r1 = rev;
    const t1 = new Date();
    const want = await source.hashKV(m.clientURL, r1);

    const changes = await readChanges(source, r0 + 1, r1);
    expect(changes.map((c) => c.revision)).to.deep.equal(Array.from({ length: r1 - r0 }, (_, i) => r0 + 1 + i));
    expect(changes.map((c) => c.ops.length)).to.deep.equal([1, 1, 1, 3, 3, 1, 1]);
    const bytes = encodeSegment(makeSegment(changes, t0, t1));
    const seg = decodeSegment(bytes, 'test segment');
    expect(seg).to.deep.include({ fromRevision: r0 + 1, toRevision: r1, firstTime: t0.toISOString(), lastTime: t1.toISOString() });
    expect(seg.changes).to.deep.equal(changes);

    scratch = await startScratchMember(snap.location, join(dir, 'scratch'), DEFAULT_SVC_ENTRY);
    await waitFor('the restored member serving', async () => ((await mc.healthy(scratch!.clientURL)) ? true : scratch!.exited() ? Promise.reject(new Error(scratch!.logTail())) : undefined), 30_000, 100);
    replica = await Client.connect({ endpoints: [scratch.clientURL] });
    expect(await replayChanges(replica, r0, seg.changes)).to.equal(r1);
    const got = await replica.hashKV(scratch.clientURL, r1);
    expect({ hash: got.hash, compact: got.compact_revision }).to.deep.equal({ hash: want.hash, compact: want.compact_revision });
    const all = async (c: Client) => (await c.get('', { prefix: true })).kvs.map((kv) => [Buffer.from(kv.key).toString('hex'), Buffer.from(kv.value).toString('hex'), kv.create_revision, kv.mod_revision, kv.version].join(' '));
    expect(await all(replica)).to.deep.equal(await all(source));
    // the replayed member moved on: the same changes again are refused before anything is written
    let refused: unknown;
    await replayChanges(replica, r0, seg.changes).catch((e: unknown) => { refused = e; });
    expect(refused).to.be.instanceOf(ReplayError);
    expect((refused as Error).message).to.include(`the member is at revision ${r1}, the changes follow revision ${r0}`);
  });
});
