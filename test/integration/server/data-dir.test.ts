// What a svc member does with a damaged data dir: a missing v3 db next to existing snapshots stops it with a
// clear message (the seed's rule, nothing recreated in its place), and a torn WAL tail left by a crash is
// repaired so the member starts and rejoins.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { useSvcClusters } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

/** Offset just past the last non-zero byte (WAL segments are preallocated; zeros mark the unwritten end). */
function dataEnd(file: string): number {
  const buf = readFileSync(file);
  let end = buf.length;
  while (end > 0 && buf[end - 1] === 0) end--;
  return end;
}

describe('svc data dir damage', function () {
  this.timeout(120000);
  const clusters = useSvcClusters();

  it('refuses to start when member/snap/db is missing while a snapshot exists, and creates nothing in its place', async () => {
    const c = await clusters.start({ size: 1, extraArgs: ['--snapshot-count=20'] });
    for (let n = 0; n < 40; n++) await c.put(0, `dbgone/k${n}`, `v${n}`);
    await c.waitForLog(0, /saved snapshot/);
    expect((await c.stop(0)).code).to.equal(0);
    const snapDir = join(c.members[0].dataDir, 'member', 'snap');
    const db = join(snapDir, 'db');
    expect(readdirSync(snapDir).filter((f) => f.endsWith('.snap')), 'consensus snapshots on disk').to.not.deep.equal([]);
    rmSync(db);
    const before = readdirSync(snapDir).sort();

    await c.start(0, { waitHealthy: false });
    const st = await c.members[0].process.exited;
    expect(st.code, 'exit status').to.be.a('number').and.not.equal(0);
    expect(c.currentLog(0)).to.include(db);
    expect(existsSync(db), 'a db file was created in place of the missing one').to.equal(false);
    expect(readdirSync(snapDir).sort()).to.deep.equal(before);
  });

  it('a torn WAL tail after SIGKILL is repaired: the member starts and rejoins with all data', async () => {
    const c = await clusters.start({ size: 3 });
    const leader = await c.leader();
    const victim = [0, 1, 2].find((i) => i !== leader)!;
    const written = new Map<string, string>();
    for (let n = 0; n < 20; n++) {
      await c.put(leader, `torn/k${n}`, `v${n}`);
      written.set(`torn/k${n}`, `v${n}`);
    }
    // Wait until the victim has applied everything, so its WAL tail holds the last writes.
    for (let t = 0; (await c.get(victim, 'torn/k19', { serializable: true })) !== 'v19'; t++) {
      if (t > 100) expect.fail('the follower never applied the writes');
      await sleep(100);
    }
    await c.kill(victim);
    const walDir = join(c.members[victim].dataDir, 'member', 'wal');
    const segments = readdirSync(walDir).filter((f) => f.endsWith('.wal')).sort();
    const last = join(walDir, segments[segments.length - 1]);
    const end = dataEnd(last);
    expect(end, 'bytes of records in the last WAL segment').to.be.greaterThan(16);
    truncateSync(last, end - 5); // cut into the last record, as a crash in the middle of an append does

    await c.put(leader, 'torn/while-down', 'w');
    written.set('torn/while-down', 'w');
    await c.start(victim);
    const deadline = Date.now() + 20000;
    for (;;) {
      const got = new Map((await c.range(victim, 'torn/', { serializable: true })).map((kv) => [kv.key, kv.value]));
      const missing = [...written].filter(([k, v]) => got.get(k) !== v).map(([k]) => k);
      if (missing.length === 0) break;
      if (Date.now() > deadline) expect.fail(`${c.members[victim].name} lacks ${missing.join(', ')}`);
      await sleep(200);
    }
    await c.put(victim, 'torn/after', 'a');
    expect(await c.get(leader, 'torn/after')).to.equal('a');
  });

  it('a member restarted after SIGKILL recovers from its own snapshot plus the WAL after it', async () => {
    const c = await clusters.start({ size: 1, extraArgs: ['--snapshot-count=20'] });
    const written = new Map<string, string>();
    for (let n = 0; n < 55; n++) {
      await c.put(0, `ownsnap/k${n}`, `v${n}`);
      written.set(`ownsnap/k${n}`, `v${n}`);
    }
    await c.waitForLog(0, /saved snapshot/);
    await c.put(0, 'ownsnap/k3', 'overwritten');
    written.set('ownsnap/k3', 'overwritten');
    await c.post(0, '/v3/kv/deleterange', { key: Buffer.from('ownsnap/k4').toString('base64') });
    written.delete('ownsnap/k4');
    await c.kill(0);
    await c.start(0);
    const got = new Map((await c.range(0, 'ownsnap/')).map((kv) => [kv.key, kv.value]));
    expect(got).to.deep.equal(written);
  });
});
