// Maintenance with the local runtime against real svc processes, under a running workload whose history the
// linearizability checker reads: a small quota filled to NOSPACE by overwrites is relieved by `local apply` itself
// (compaction, every member defragmented one at a time with the leader last after MoveLeader, the alarm disarmed)
// and writes resume; filled again by data that does fit no more, the relief stops at Stalled with the numbers, and
// a raised quota lets it finish; a threshold defragmentation and a scheduled one shrink every member's database
// file with no write failing. At the end every acknowledged write reads back from every member, and the history is
// linearizable.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster, type SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { checkAcknowledgedWrites } from '../../../harness/chaos/checks.js';
import { HistoryRecorder } from '../../../harness/chaos/history.js';
import { ChaosKvClient } from '../../../harness/chaos/kv-client.js';
import { checkHistory } from '../../../harness/chaos/linearizability.js';
import { rng } from '../../../harness/chaos/rng.js';
import { Workload } from '../../../harness/chaos/workload.js';
import { Client } from '../../../server/client/index.js';
import { BackgroundWriter } from '../../../operator/workload/writer.js';
import { useLocalRuntime } from './local-fixture.js';
import { StepPrinter } from '../../../operator/cli/printer.js';
import { waitFor } from '../../../harness/process.js';

const QUOTA = 6 * 2 ** 20;
const manifest = (maintenance: SvcClusterSpec['maintenance'] = {}): SvcCluster => ({
  apiVersion: API_VERSION, kind: KIND, metadata: { name: 'mt' },
  spec: withDefaults({ version: '3.5.21', replicas: 3, maintenance: { quotaBackendBytes: QUOTA, ...maintenance } } as SvcClusterSpec),
});
const NAMES = ['mt-0', 'mt-1', 'mt-2'];

describe('operator local runtime: NOSPACE relief and defragmentation (real processes, a workload, the linearizability checker)', function () {
  this.timeout(150_000);
  const { stateDir, rt, mc } = useLocalRuntime('mt');
  const dbBytes = (name: string) => statSync(join(rt.state()!.members.find((m) => m.name === name)!.dataDir, 'member', 'snap', 'db')).size;
  const big = 'x'.repeat(64 * 1024);
  /** Waits until every member's compaction left at least a third of its database file unused. */
  const fragmented = () => waitFor('every member compacted', async () => {
    const st = await Promise.all(rt.state()!.members.map((m) => mc.status(`http://127.0.0.1:${m.clientPort}`)));
    return st.every((x) => x.dbSizeInUse !== undefined && (x.dbSize - x.dbSizeInUse) / x.dbSize >= 1 / 3) ? true : undefined;
  }, 20_000, 100);
  /** Any MoveLeader comes right before the defragmentation of the member it moved leadership from, the round's last. */
  const expectLeaderLast = (actions: string[]) => {
    const defrags = actions.filter((a) => a.startsWith('defragMember'));
    for (const [i, a] of actions.entries()) {
      if (!a.startsWith('moveLeader')) continue;
      expect(actions[i + 1], actions.join(', ')).to.equal(`defragMember ${a.split(' ')[1]}`);
      expect(defrags.at(-1), actions.join(', ')).to.equal(actions[i + 1]);
    }
  };

  /** Puts 64 KiB values through `conn` until the server refuses with NOSPACE; returns how many were acknowledged. */
  async function fill(conn: ChaosKvClient, key: (i: number) => string): Promise<number> {
    for (let i = 0; i < 2000; i++) {
      try {
        await conn.put(key(i), big);
      } catch (e) {
        if (/database space exceeded/.test((e as Error).message)) return i;
        throw e;
      }
    }
    throw new Error('the quota was never reached');
  }

  it('relieves NOSPACE by itself, stalls with the numbers when the data does not fit, defragments on a threshold and a schedule; nothing acknowledged is lost', async () => {
    expect((await applyCluster(manifest(), { stateDir })).outcome).to.equal('steady');
    const st = rt.state()!;
    const target = { members: st.members.map((m) => ({ name: m.name, endpoint: `127.0.0.1:${m.clientPort}` })), running: () => [0, 1, 2] };
    const history = new HistoryRecorder();
    const workload = new Workload(target, history, rng(28), { clients: 2, keys: ['mt/a', 'mt/b', 'mt/c', 'mt/d'], deadlineMs: 3000 });
    const filler = new ChaosKvClient(target.members[0].endpoint, 10_000);
    let written: Map<string, string> | undefined;
    let writer: BackgroundWriter | undefined;
    workload.start();
    try {
      // 1. overwrites of a few keys fill the quota with history: compaction frees it
      await fill(filler, (i) => `fill/${i % 4}`);
      // member IDs as etcdctl prints them (hex), and what let the alarm go, as it happened
      const hexIds = new Set(await Promise.all(rt.state()!.members.map(async (m) => BigInt((await mc.status(`http://127.0.0.1:${m.clientPort}`)).id).toString(16))));
      let printed = '';
      const printer = new StepPrinter({ write: (t: string) => (printed += t) });
      const disarmLine = () => {
        const m = /disarmAlarm: disarm the NOSPACE alarm of member (\S+) through mt-\d: (.*)\n/.exec(printed);
        expect(m, printed).to.not.equal(null);
        expect(hexIds, `member ${m![1]}`).to.include(m![1]);
        return m![2];
      };
      const r1 = await applyCluster(manifest(), { stateDir, timeoutMs: 60_000, printer });
      expect(r1.outcome, r1.error ?? JSON.stringify(r1.step)).to.equal('steady');
      expect(r1.actions[0]).to.match(/^compact \d+$/);
      expect(r1.actions.filter((a) => a.startsWith('defragMember')).sort()).to.deep.equal(NAMES.map((n) => `defragMember ${n}`));
      // the leader last, after leadership moved to a member already defragmented (an election on this loaded machine
      // may have moved it already: then no MoveLeader was needed)
      expectLeaderLast(r1.actions);
      expect(r1.actions.at(-1)).to.equal('disarmAlarm NOSPACE');
      expect(disarmLine()).to.match(/^compacted and defragmented; the largest database \(mt-\d, [\d.]+ MiB\) fits in the quota of 6\.0 MiB again$/);
      expect(r1.defrags.every((d) => d.reason === 'NoSpace' && d.after! < d.before!), JSON.stringify(r1.defrags)).to.equal(true);
      expect(rt.state()!.records.maintenance!.round).to.include({ reason: 'NoSpace', compacted: true });
      expect(rt.state()!.records.maintenance!.round!.finishedAt).to.be.a('number');
      await filler.put('mt/after-relief', 'written');

      // 2. distinct keys: compaction frees nothing, the alarm stays raised (Stalled, the numbers, the ways out)
      await fill(filler, (i) => `keep/${i}`);
      const r2 = await applyCluster(manifest(), { stateDir, timeoutMs: 60_000 });
      expect(r2.outcome, r2.error ?? JSON.stringify(r2.step)).to.equal('blocked');
      expect(r2.step).to.include({ kind: 'blocked', code: 'NoSpaceNotRelieved', condition: 'NoSpace' });
      expect((r2.step as { reason: string }).reason).to.match(/database of mt-\d is [\d.]+ MiB .* against a quota of 6\.0 MiB .* raise spec\.maintenance\.quotaBackendBytes .* grow spec\.storage\.size/);
      await filler.put('mt/refused', 'x').then(() => expect.fail('a write under NOSPACE was accepted'), (e: Error) => expect(e.message).to.match(/database space exceeded/));
      // the way out: a larger quota; the members restart with it, then the alarm is disarmed
      printed = '';
      const r3 = await applyCluster(manifest({ quotaBackendBytes: 4 * QUOTA }), { stateDir, timeoutMs: 90_000, printer });
      expect(r3.outcome, r3.error ?? JSON.stringify(r3.step)).to.equal('steady');
      expect(r3.actions.filter((a) => a.startsWith('restartMember'))).to.have.length(3);
      expect(r3.actions.at(-1)).to.equal('disarmAlarm NOSPACE');
      // not "compacted and defragmented": nothing was in this run; the quota was raised
      expect(disarmLine()).to.match(/^the quota was raised to 24\.0 MiB \(compacted and defragmented before, which was not enough\); the largest database \(mt-\d, [\d.]+ MiB\) fits in the quota of 24\.0 MiB$/);
      await filler.put('mt/after-quota', 'written');
      const admin = await Client.connect({ endpoints: [target.members[0].endpoint] });
      await admin.delete('keep/', { prefix: true }).finally(() => admin.close());
      // the restarts left the workload's channels reconnecting (a call fails at once meanwhile, before any member
      // sees it): the next stage counts refused writes, so it starts once every channel answers again
      await waitFor('the workload reconnected to every member', async () => {
        const answers = await Promise.all(target.members.map((_, i) => workload.conn(i).run({ kind: 'get', key: 'mt/a' })));
        return answers.every((a) => a.outcome === 'ok') ? true : undefined;
      }, 20_000, 200);

      // 3. a threshold: a compaction asked for (`local compact`) drops the overwritten and deleted values, which
      // leaves most of each file unused; no write fails meanwhile
      const opsBefore = history.ops.length;
      // a client that retries as clients do (a MoveLeader ends proposals in flight with "leader changed")
      writer = new BackgroundWriter({ endpoints: target.members.map((m) => `http://${m.endpoint}`), prefix: 'mt/w/', intervalMs: 20 });
      await writer.start();
      for (let i = 0; i < 30; i++) await filler.put(`frag/${i % 3}`, big);
      const before = Object.fromEntries(NAMES.map((n) => [n, dbBytes(n)]));
      const raised = manifest({ quotaBackendBytes: 4 * QUOTA });
      rt.requestMaintenance('compact');
      const compacted = await applyCluster(raised, { stateDir, timeoutMs: 60_000 });
      expect(compacted.actions).to.have.length(1);
      expect(compacted.actions[0]).to.match(/^compact \d+$/);
      await fragmented();
      const r4 = await applyCluster(manifest({ quotaBackendBytes: 4 * QUOTA, defrag: { threshold: { fragmentation: '30%' } } }), { stateDir, timeoutMs: 60_000 });
      expect(r4.outcome, r4.error ?? JSON.stringify(r4.step)).to.equal('steady');
      expect(r4.defrags.map((d) => d.member).sort()).to.deep.equal(NAMES);
      expect(r4.defrags.every((d) => d.reason === 'Threshold')).to.equal(true);
      for (const n of NAMES) expect(dbBytes(n), n).to.be.lessThan(before[n]);
      // 4. a schedule (every 10 s): one round, every member once
      for (let i = 0; i < 30; i++) await filler.put(`frag/${i % 3}`, big);
      rt.requestMaintenance('compact');
      await applyCluster(raised, { stateDir, timeoutMs: 60_000 });
      const lastCompaction = rt.state()!.records.maintenance!.round!.compactRevision!;
      await fragmented();
      const r5 = await applyCluster(manifest({ quotaBackendBytes: 4 * QUOTA, defrag: { schedule: '*/10 * * * * *' } }), { stateDir, timeoutMs: 60_000 });
      expect(r5.outcome, r5.error ?? JSON.stringify(r5.step)).to.equal('steady');
      // (a round slower than the 10 s of the schedule is followed by the next slot's)
      expect([...new Set(r5.defrags.map((d) => d.member))].sort()).to.deep.equal(NAMES);
      expect(r5.defrags.every((d) => d.reason === 'Scheduled'), JSON.stringify(r5.defrags)).to.equal(true);
      expect(r5.defrags.slice(0, 3).every((d) => d.after! < d.before!), JSON.stringify(r5.defrags)).to.equal(true);
      // writes acknowledged above the last compaction are what the end reads back at their revisions
      const readable = () => history.ops.filter((o) => o.outcome === 'ok' && o.input.kind === 'put' && (o.revision ?? 0) > lastCompaction).length;
      await waitFor('the workload writes above the last compaction', async () => (readable() >= 20 ? true : undefined), 20_000, 100);
      const stats = await writer.stop();
      writer = undefined;
      expect(stats.failed, stats.errors.join('\n')).to.equal(0);
      expect(stats.succeeded).to.be.greaterThan(10);
      written = stats.written;
      // none refused by a member (a put ended by a leader change is of unknown outcome, and the checker weighs it)
      const during = history.ops.slice(opsBefore).filter((o) => o.input.kind !== 'get' && o.outcome === 'failed');
      expect(during, 'writes refused during the defragmentations').to.deep.equal([]);
      expect(history.ops.slice(opsBefore).filter((o) => o.input.kind !== 'get').length).to.be.greaterThan(5);
    } finally {
      await writer?.stop();
      await workload.stop();
      filler.close();
    }
    await workload.finalReads();
    workload.close();
    const verdict = checkHistory(history.ops, { budgetMs: 20_000 });
    expect(verdict.ok, verdict.report).to.equal(true);
    expect(verdict.undecided).to.deep.equal([]);
    for (const m of target.members) {
      const conn = new ChaosKvClient(m.endpoint, 3000);
      try {
        const report = await checkAcknowledgedWrites(history.ops, conn);
        expect(report.lost, m.name).to.deep.equal([]);
        expect(report.checked, `${m.name}: ${report.compacted} compacted`).to.be.greaterThan(10);
        expect((await conn.getAt('mt/after-relief')).value).to.equal('written');
        expect((await conn.getAt('mt/after-quota')).value).to.equal('written');
        for (const [k, v] of written ?? []) expect((await conn.getAt(k)).value, `${m.name} ${k}`).to.equal(v);
      } finally {
        conn.close();
      }
    }
  });
});
