// Failure of the leader and of a follower in a 3-member svc cluster: a new leader at a higher term, no
// acknowledged write lost, and a restarted follower catching up, from the log or (when the leader has
// compacted its log past it) from a snapshot.
import { expect } from 'chai';
import { useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';
import { sleep } from '../../../harness/process.js';

/** Writes keys `prefix<n>` one after another, rotating over the running members, retrying each until acked. */
class Writer {
  readonly acked = new Map<string, string>();
  failures = 0;
  private stopped = false;
  private done: Promise<void> | undefined;
  constructor(private readonly c: SvcCluster, private readonly prefix: string) {}

  start(): void {
    this.done = (async () => {
      let n = 0;
      let turn = 0;
      while (!this.stopped) {
        const key = `${this.prefix}${String(n).padStart(5, '0')}`;
        const value = `v${n}`;
        for (;;) {
          const live = this.c.running();
          const i = live[turn++ % Math.max(1, live.length)];
          try {
            if (i === undefined) throw new Error('no member running');
            await this.c.put(i, key, value);
            this.acked.set(key, value);
            break;
          } catch {
            // Unacknowledged: it may or may not be applied; only acked writes are checked.
            this.failures++;
            if (this.stopped) break;
            await sleep(100);
          }
        }
        n++;
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  async waitForAcks(count: number, timeoutMs = 30000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acked.size < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.acked.size} of ${count} writes acked within ${timeoutMs} ms`);
      await sleep(50);
    }
  }
}

async function term(c: SvcCluster, i: number): Promise<number> {
  return Number((await c.status(i)).raftTerm);
}

/** Polls a serializable (local) read of the prefix on member i until it holds every acked key. */
async function expectAllLocal(c: SvcCluster, i: number, prefix: string, acked: Map<string, string>, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = new Map((await c.range(i, prefix, { serializable: true })).map((kv) => [kv.key, kv.value]));
    const missing = [...acked].filter(([k, v]) => got.get(k) !== v);
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      expect.fail(`${c.members[i].name} lacks ${missing.length} acked writes, e.g. ${missing.slice(0, 5).map(([k]) => k).join(', ')}`);
    }
    await sleep(200);
  }
}

describe('svc cluster: member failures', function () {
  this.timeout(120000);
  const clusters = useSvcClusters();

  it('SIGKILL of the leader: a new leader at a higher term, no acknowledged write lost', async () => {
    const c = await clusters.start({ size: 3 });
    const oldLeader = await c.leader();
    const oldTerm = await term(c, oldLeader);
    const writer = new Writer(c, 'failover/');
    writer.start();
    try {
      await writer.waitForAcks(30);
      await c.kill(oldLeader);
      const before = writer.acked.size;
      const newLeader = await c.leader();
      expect(newLeader).to.not.equal(oldLeader);
      expect(await term(c, newLeader), 'term of the new leader').to.be.greaterThan(oldTerm);
      await writer.waitForAcks(before + 30);
    } finally {
      await writer.stop();
    }
    const survivors = c.running();
    for (const i of survivors) {
      const got = new Map((await c.range(i, 'failover/')).map((kv) => [kv.key, kv.value]));
      const missing = [...writer.acked].filter(([k, v]) => got.get(k) !== v);
      expect(missing.map(([k]) => k), `acked writes missing on ${c.members[i].name}`).to.deep.equal([]);
    }
    // The old leader comes back as a follower and catches up from the log (no snapshot was taken).
    await c.start(oldLeader);
    await expectAllLocal(c, oldLeader, 'failover/', writer.acked);
    expect(await c.leader()).to.not.equal(oldLeader);
    expect(c.currentLog(oldLeader)).to.not.match(/applying snapshot/);
  });

  it('a killed follower restarted catches up from a snapshot after the leader compacted its log', async () => {
    const c = await clusters.start({ size: 3, extraArgs: ['--snapshot-count=20'] });
    const leader = await c.leader();
    const follower = [0, 1, 2].find((i) => i !== leader)!;
    await c.put(leader, 'catchup/before', 'x');
    await expectAllLocal(c, follower, 'catchup/', new Map([['catchup/before', 'x']]));
    await c.kill(follower);

    // Far more entries than --snapshot-count while the follower is down: the leader snapshots and drops
    // the log prefix the follower would need.
    const written = new Map<string, string>([['catchup/before', 'x']]);
    for (let n = 0; n < 120; n++) {
      const key = `catchup/k${String(n).padStart(4, '0')}`;
      await c.put(leader, key, `v${n}`);
      written.set(key, `v${n}`);
    }
    await c.waitForLog(leader, /saved snapshot/);

    await c.start(follower, { waitHealthy: false });
    await c.waitForLog(follower, /applying snapshot/);
    await c.waitHealthy();
    await expectAllLocal(c, follower, 'catchup/', written);
    // And it keeps following after the snapshot.
    await c.put(leader, 'catchup/after', 'y');
    written.set('catchup/after', 'y');
    await expectAllLocal(c, follower, 'catchup/', written);
  });

  it('SIGKILL of every member at once: after restarting all, every acknowledged write is there', async () => {
    const c = await clusters.start({ size: 3, extraArgs: ['--snapshot-count=25'] });
    const written = new Map<string, string>();
    for (let n = 0; n < 60; n++) {
      await c.put(n % 3, `crash/k${String(n).padStart(3, '0')}`, `v${n}`);
      written.set(`crash/k${String(n).padStart(3, '0')}`, `v${n}`);
    }
    await Promise.all([0, 1, 2].map((i) => c.kill(i)));
    await Promise.all([0, 1, 2].map((i) => c.start(i, { waitHealthy: false })));
    await c.waitHealthy();
    for (let i = 0; i < 3; i++) {
      const got = new Map((await c.range(i, 'crash/')).map((kv) => [kv.key, kv.value]));
      const missing = [...written].filter(([k, v]) => got.get(k) !== v).map(([k]) => k);
      expect(missing, `acked writes missing on ${c.members[i].name} after the crash`).to.deep.equal([]);
      await expectAllLocal(c, i, 'crash/', written);
    }
    await c.put(0, 'crash/after', 'ok');
    expect(await c.get(2, 'crash/after')).to.equal('ok');
  });
});
