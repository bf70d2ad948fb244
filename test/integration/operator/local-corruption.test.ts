// The CORRUPT alarm handled by the operator on the local runtime, with real members checking each other
// (--experimental-corrupt-check-time): a follower's stored value is altered while it is stopped; once it is back the
// leader raises CORRUPT and writes are refused, which `local status` says (the alarm, for whom, the way out).
// `local apply` then finds the member whose KV hash differs from the majority's, replaces it through a learner under
// a new member ID, and disarms the alarm: writes go through again, and every member holds the original value.
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { Client } from '../../../server/client/index.js';
import { alterStoredValue } from '../../../harness/alter-kv.js';
import { waitFor } from '../../../harness/process.js';
import { endProcess, useLocalRuntime } from './local-fixture.js';
import { operatorCli } from './operator-cli.js';

const manifest = (): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'cr' }, spec: withDefaults({ version: '3.5.21', replicas: 3 }) });

describe('operator local runtime: the CORRUPT alarm (a member whose data differs is replaced, the alarm disarmed)', function () {
  this.timeout(150_000);
  const { stateDir, rt, mc } = useLocalRuntime('cr');
  const before = process.env.SVC_EXPERIMENTAL_CORRUPT_CHECK_TIME;

  // the members inherit this process's environment: the leader compares the members' hashes every second
  process.env.SVC_EXPERIMENTAL_CORRUPT_CHECK_TIME = '1s';
  after(() => {
    if (before === undefined) delete process.env.SVC_EXPERIMENTAL_CORRUPT_CHECK_TIME;
    else process.env.SVC_EXPERIMENTAL_CORRUPT_CHECK_TIME = before;
  });

  const member = (name: string) => rt.state()!.members.find((m) => m.name === name)!;
  const url = (name: string) => `http://127.0.0.1:${member(name).clientPort}`;
  const names = ['cr-0', 'cr-1', 'cr-2'];

  it('replaces the altered follower under a new ID through a learner, disarms CORRUPT, and writes go through again', async () => {
    expect((await applyCluster(manifest(), { stateDir })).outcome).to.equal('steady');
    const c = await Client.connect({ endpoints: names.map(url), commandTimeoutMs: 5000 });
    try {
      for (let i = 0; i < 20; i++) await c.put(`k${i}`, `v${i}`);
      const leaderId = String((await c.status(url('cr-0'))).leader);
      const list = await mc.memberList(url('cr-0'));
      const victim = list.find((m) => m.id !== leaderId)!;

      // altered while stopped, then started again as it was (its data is intact as far as it can tell); the leader's
      // next check raises CORRUPT
      await endProcess(member(victim.name).pid!, 'SIGTERM');
      alterStoredValue(member(victim.name).dataDir, 'k7', 'altered');
      expect(await rt.startStopped()).to.deep.equal([victim.name]);
      await waitFor('the CORRUPT alarm', async () => (await mc.alarms(url('cr-0'))).some((a) => a.alarm === 'CORRUPT') || undefined, 30_000, 300);
      const refused = await c.put('during', 'x').then(() => 'written', (e: Error) => e.message);
      expect(refused).to.contain('corrupt cluster');
      // the status says so (the members read healthy, the alarm aside): which alarm, for whom (hex), the way out
      const alarm = (await mc.alarms(url('cr-0'))).find((a) => a.alarm === 'CORRUPT')!;
      const whom = alarm.memberId === '0' ? 'the cluster (member 0)' : `member ${BigInt(alarm.memberId).toString(16)} (${list.find((m) => m.id === alarm.memberId)!.name})`;
      const during = JSON.parse((await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json'])).out) as { writesRefused: { reason: string; message: string } | null };
      expect(during.writesRefused).to.deep.equal({
        reason: 'CorruptAlarm',
        message: `writes are refused, reads go on: the CORRUPT alarm is raised for ${whom}: the members' data may differ, and every write fails with "corrupt cluster"; ` +
          'the operator compares the members\' KV hashes, replaces a member that differs from a strict majority, then disarms it (locally: `svc-operator local apply`); ' +
          'with no majority a person decides (`svc-operator local alarm list cr`, `kubectl svc alarm list cr`)',
      });

      const r = await applyCluster(manifest(), { stateDir });
      expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
      expect(r.actions).to.deep.equal([`replaceMember ${victim.name} DataCorrupt`, `promoteMember ${victim.name}`, 'disarmAlarm CORRUPT']);
      expect(rt.state()!.records.replacements![victim.name].detail).to.match(/CORRUPT alarm is raised and its KV hash at revision \d+ is \d+, where 2 of 3 members have \d+/);
      const now = await mc.memberList(url('cr-0'));
      expect(now.map((m) => m.name).sort()).to.deep.equal(names);
      expect(now.filter((m) => m.isLearner)).to.deep.equal([]);
      expect(now.find((m) => m.name === victim.name)!.id).to.not.equal(victim.id);
      expect(await mc.alarms(url('cr-0'))).to.deep.equal([]);
      expect((JSON.parse((await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json'])).out) as { writesRefused: unknown }).writesRefused).to.equal(null);
      await c.put('after', 'y');
      for (const n of names) {
        const one = await Client.connect({ endpoints: [url(n)], commandTimeoutMs: 5000 });
        try {
          await waitFor(`${n} has the write after the alarm`, async () => (await one.get('after', { serializable: true })).kvs.length === 1 || undefined, 20_000, 200);
          expect((await one.get('k7', { serializable: true })).kvs[0].value.toString(), n).to.equal('v7');
        } finally {
          one.close();
        }
      }
    } finally {
      c.close();
    }
  });
});
