// What `local status` says while a raised alarm refuses every write, on real processes: a small quota filled to
// NOSPACE by overwrites. The members read healthy (the alarm aside), so the status names the alarm on each member it
// is raised for, says that writes are refused (the members by hex ID and name, the error writes get, the way out) and
// gives the same in its JSON; `local apply` relieves it, after which the status says nothing of it and writes go on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ChaosKvClient } from '../../../harness/chaos/kv-client.js';
import { operatorCli } from './operator-cli.js';
import { useLocalRuntime } from './local-fixture.js';

const QUOTA = 6 * 2 ** 20;
const MANIFEST = ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', 'metadata: {name: ns}', 'spec:', '  version: 3.5.21', '  replicas: 3',
  `  maintenance: {quotaBackendBytes: ${QUOTA}}`, ''].join('\n');

describe('operator local runtime: status while the NOSPACE alarm refuses writes (a real quota)', function () {
  this.timeout(150_000);
  const { stateDir, rt, mc } = useLocalRuntime('ns');
  const file = join(stateDir, 'ns.yaml');
  const url = (name: string) => `http://127.0.0.1:${rt.state()!.members.find((m) => m.name === name)!.clientPort}`;

  it('names the alarm and its members (hex), says writes are refused and the way out; once relieved by local apply, says nothing of it', async () => {
    writeFileSync(file, MANIFEST);
    const created = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(created.code, created.out).to.equal(0);
    const names = rt.state()!.members.map((m) => m.name);
    const filler = new ChaosKvClient(url(names[0]).slice('http://'.length), 10_000);
    try {
      // overwrites of a few keys until the quota refuses them (compaction frees the history later)
      const big = 'x'.repeat(64 * 1024);
      let refused = '';
      for (let i = 0; i < 2000 && !refused; i++) {
        await filler.put(`fill/${i % 4}`, big).catch((e: Error) => {
          if (!/database space exceeded/.test(e.message)) throw e;
          refused = e.message;
        });
      }
      expect(refused, 'the quota was never reached').to.match(/database space exceeded/);

      // the alarms as the members list them, and each member's ID: what the status must say
      const alarms = await mc.alarms(url(names[0]));
      const ids = new Map(await Promise.all(names.map(async (n) => [String((await mc.status(url(n))).id), n] as const)));
      const raised = [...new Set(alarms.filter((a) => a.alarm === 'NOSPACE').map((a) => a.memberId))].sort();
      expect(raised.length, JSON.stringify(alarms)).to.be.greaterThan(0);
      const who = raised.map((id) => `member ${BigInt(id).toString(16)} (${ids.get(id)})`).join(', ');
      const message = `writes are refused, reads go on: the NOSPACE alarm is raised for ${who}: the database reached its quota, and every write fails with "database space exceeded"; ` +
        'the operator relieves it (compaction, every member defragmented, then the alarm disarmed; locally: `svc-operator local apply`); if the data does not fit even then, raise spec.maintenance.quotaBackendBytes or delete keys';

      const status = await operatorCli(['local', 'status', '--state-dir', stateDir]);
      expect(status.code, status.out).to.equal(0);
      const lines = status.out.split('\n');
      expect(lines, status.out).to.include(message);
      for (const n of names) {
        const row = lines.find((l) => l.startsWith(`${n} `))!;
        const alarmed = raised.some((id) => ids.get(id) === n);
        expect(row, status.out).to.match(new RegExp(`^${n}\\s+3\\.5\\.21\\s+\\*?\\s*healthy${alarmed ? ' \\(NOSPACE alarm\\)' : ''}\\s+${url(n)}$`));
      }
      const json = JSON.parse((await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json'])).out) as { writesRefused: { reason: string; message: string } | null; members: Array<{ name: string; alarms: string[] }> };
      expect(json.writesRefused).to.deep.equal({ reason: 'NoSpaceAlarm', message });
      expect(json.members.filter((m) => m.alarms.includes('NOSPACE')).map((m) => m.name).sort()).to.deep.equal(raised.map((id) => ids.get(id)).sort());
      // what the status says is so: a write is refused
      await filler.put('after/alarm', 'x').then(() => expect.fail('a write under NOSPACE was accepted'), (e: Error) => expect(e.message).to.match(/database space exceeded/));

      // the way out it names: local apply relieves it; the status then says nothing of it, and writes go on
      const relieved = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
      expect(relieved.code, relieved.out).to.equal(0);
      expect(relieved.out).to.match(/disarmAlarm: disarm the NOSPACE alarm of member [0-9a-f]+ /);
      const after = await operatorCli(['local', 'status', '--state-dir', stateDir]);
      expect(after.code, after.out).to.equal(0);
      expect(after.out).to.not.match(/writes are refused|alarm\)/);
      expect((JSON.parse((await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json'])).out) as { writesRefused: unknown }).writesRefused).to.equal(null);
      await filler.put('after/relief', 'written');
      expect((await filler.getAt('after/relief')).value).to.equal('written');
    } finally {
      filler.close();
    }
  });
});
