// Healing with the local runtime against real svc processes, under a running workload whose history the
// linearizability checker reads: a follower SIGKILLed with its data dir deleted, then the leader SIGKILLed with its
// db file overwritten with garbage, are each replaced by `local apply` (MemberRemove, a fresh data dir, MemberAdd as a
// learner, promoted once caught up) under a new member ID; a member killed again and again with its data kept is
// restarted, never removed. At the end every acknowledged write reads back from every member, and the history is
// linearizable.
import { openSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { checkAcknowledgedWrites } from '../../../harness/chaos/checks.js';
import { HistoryRecorder } from '../../../harness/chaos/history.js';
import { ChaosKvClient } from '../../../harness/chaos/kv-client.js';
import { checkHistory } from '../../../harness/chaos/linearizability.js';
import { rng } from '../../../harness/chaos/rng.js';
import { Workload } from '../../../harness/chaos/workload.js';
import { endProcess, useLocalRuntime } from './local-fixture.js';

const manifest = (): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'hl' }, spec: withDefaults({ version: '3.5.21', replicas: 3 }) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('operator local runtime: lost members replaced through learners (real processes, a workload, the linearizability checker)', function () {
  this.timeout(150_000);
  const { stateDir, rt, mc } = useLocalRuntime('hl');

  const member = (name: string) => rt.state()!.members.find((m) => m.name === name)!;
  async function leaderName(): Promise<string> {
    for (let i = 0; i < 50; i++) {
      for (const m of await rt.members()) if (m.running && (await mc.isLeader(m.clientURL).catch(() => false))) return m.name;
      await sleep(200);
    }
    throw new Error('no leader');
  }
  async function memberList() {
    const leader = member(await leaderName());
    return mc.memberList(`http://127.0.0.1:${leader.clientPort}`);
  }
  /** Three voting members, `name` under another ID than `oldId`. */
  async function expectReplaced(name: string, oldId: string): Promise<void> {
    const list = await memberList();
    expect(list.map((m) => m.name).sort()).to.deep.equal(['hl-0', 'hl-1', 'hl-2']);
    expect(list.filter((m) => m.isLearner)).to.deep.equal([]);
    const now = list.find((m) => m.name === name)!;
    expect(now.id).to.not.equal(oldId);
    expect(list.some((m) => m.id === oldId)).to.equal(false);
  }

  it('replaces a wiped follower and a leader with a corrupt db under new IDs, restarts (never removes) a member killed with its data, loses nothing', async () => {
    expect((await applyCluster(manifest(), { stateDir })).outcome).to.equal('steady');
    const st = rt.state()!;
    const target = { members: st.members.map((m) => ({ name: m.name, endpoint: `127.0.0.1:${m.clientPort}` })), running: () => [0, 1, 2] };
    const keys = Array.from({ length: 6 }, (_, i) => `heal/k${i}`);
    const history = new HistoryRecorder();
    const workload = new Workload(target, history, rng(26), { clients: 3, keys, deadlineMs: 2000 });
    workload.start();
    try {
      await sleep(500);
      // 1. a follower: SIGKILL, its data dir deleted
      const leader = await leaderName();
      const follower = ['hl-0', 'hl-1', 'hl-2'].find((n) => n !== leader)!;
      const followerId = (await memberList()).find((m) => m.name === follower)!.id;
      await endProcess(member(follower).pid!, 'SIGKILL');
      rmSync(member(follower).dataDir, { recursive: true, force: true });
      const r1 = await applyCluster(manifest(), { stateDir });
      expect(r1.outcome, r1.error ?? JSON.stringify(r1.step)).to.equal('steady');
      expect(r1.actions).to.deep.equal([`replaceMember ${follower} DataLost`, `promoteMember ${follower}`]);
      await expectReplaced(follower, followerId);
      expect(rt.state()!.records.replacements![follower]).to.include({ oldId: followerId, cause: 'DataLost' });

      // 2. the leader: SIGKILL, its db file overwritten with garbage
      await sleep(300);
      const lead = await leaderName();
      const leadId = (await memberList()).find((m) => m.name === lead)!.id;
      await endProcess(member(lead).pid!, 'SIGKILL');
      const db = join(member(lead).dataDir, 'member', 'snap', 'db');
      const fd = openSync(db, 'r+');
      writeSync(fd, randomBytes(statSync(db).size), 0, statSync(db).size, 0);
      closeSync(fd);
      const r2 = await applyCluster(manifest(), { stateDir });
      expect(r2.outcome, r2.error ?? JSON.stringify(r2.step)).to.equal('steady');
      expect(r2.actions).to.deep.equal([`replaceMember ${lead} DataCorrupt`, `promoteMember ${lead}`]);
      await expectReplaced(lead, leadId);
      expect(rt.state()!.records.replacements![lead].detail).to.match(/database file .* is corrupt/);

      // 3. a member killed again and again with its data kept: restarted, never removed
      const kept = ['hl-0', 'hl-1', 'hl-2'].find((n) => n !== follower && n !== lead)!;
      const keptId = (await memberList()).find((m) => m.name === kept)!.id;
      for (let round = 0; round < 2; round++) {
        await endProcess(member(kept).pid!, 'SIGKILL');
        const r = await applyCluster(manifest(), { stateDir });
        expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
        expect(r.actions, `round ${round}`).to.deep.equal([]);
        expect((await memberList()).find((m) => m.name === kept)!.id).to.equal(keptId);
      }
      expect(Object.keys(rt.state()!.records.replacements!).sort()).to.deep.equal([follower, lead].sort());
      await sleep(500);
    } finally {
      await workload.stop();
    }
    await workload.finalReads();
    workload.close();
    const verdict = checkHistory(history.ops, { budgetMs: 20_000 });
    expect(verdict.ok, verdict.report).to.equal(true);
    expect(verdict.undecided).to.deep.equal([]);
    const acked = history.ops.filter((o) => o.outcome === 'ok' && o.input.kind === 'put').length;
    expect(acked).to.be.greaterThan(20);
    for (const m of target.members) {
      const conn = new ChaosKvClient(m.endpoint, 3000);
      try {
        const report = await checkAcknowledgedWrites(history.ops, conn);
        expect(report.lost, m.name).to.deep.equal([]);
        expect(report.checked, m.name).to.be.greaterThan(20);
      } finally {
        conn.close();
      }
    }
  });
});
