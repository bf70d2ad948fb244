// A member whose disk fills up, for real: one member's data dir is a small tmpfs (mounted by the test, as root), a
// writer fills it with large values until that member stops on ENOSPC. The other two keep taking writes; the
// runtime reports the stopped member with its own last log line and the way out (room on its volume), never as a
// lost member to replace. Once the tmpfs is grown, `local apply` starts it again on its intact data and it catches
// up: every acknowledged write reads back from it.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { ChaosKvClient } from '../../../harness/chaos/kv-client.js';
import { waitFor } from '../../../harness/process.js';
import { Client } from '../../../server/client/index.js';
import { useLocalRuntime, type LocalFixture } from './local-fixture.js';

const manifest = (): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'df' }, spec: withDefaults({ version: '3.5.21', replicas: 3 }) });

describe('operator local runtime: a member whose disk is full (a real tmpfs)', function () {
  this.timeout(120_000);
  let disk: string | undefined;
  // before the fixture's own after hook (registered next, so run next) removes the state dir: the members stopped,
  // the tmpfs unmounted
  after(async function () {
    this.timeout(60_000);
    await fx.rt.delete().catch(() => undefined);
    if (disk) execFileSync('umount', ['-l', disk]);
  });
  const fx: LocalFixture = useLocalRuntime('df');
  const { stateDir, rt } = fx;

  it('the full member stops and is reported with the way out; the others keep writing; with room it comes back with every acknowledged write', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test mounts a tmpfs as a member\'s disk: run it as root (as the Kubernetes tier is)');
    disk = join(stateDir, 'data', 'df-2');
    mkdirSync(disk, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', disk]);
    expect((await applyCluster(manifest(), { stateDir })).outcome).to.equal('steady');
    const endpoints = rt.state()!.members.filter((m) => m.name !== 'df-2').map((m) => `127.0.0.1:${m.clientPort}`);
    const conns = endpoints.map((e) => new ChaosKvClient(e, 5000));
    const acked = new Map<string, string>();
    const big = (i: number) => `${i}:`.padEnd(100 * 1024, 'x');
    try {
      // large values until df-2 is gone (a leadership change meanwhile fails a write or two: not acknowledged)
      let i = 0;
      const full = async () => !(await rt.members()).find((m) => m.name === 'df-2')!.running;
      for (; i < 400 && !(await full()); i++) {
        await conns[i % 2].put(`df/${i}`, big(i)).then(() => acked.set(`df/${i}`, big(i)), () => undefined);
      }
      expect(await full(), `df-2 still runs after ${i} writes of 100 KiB to a 6 MiB disk`).to.equal(true);
      // the other two hold quorum and keep taking writes
      await waitFor('a write through the two others', () => conns[0].put('df/after', 'x').then(() => true, () => undefined), 20_000, 200);
      acked.set('df/after', 'x');

      const failure = (await rt.members()).find((m) => m.name === 'df-2')!;
      // its own last error line names the full disk, whichever met it first: the WAL's write (ENOSPC) or the
      // database's commit (the native layer says "Input/output error", the member adds what the volume shows);
      // either way the member stopped cleanly and the status gives the way out
      expect(failure.failure, failure.failure).to.match(/last (error )?log line: .*(no space left on device|ENOSPC)/i);
      expect(failure.failure).to.match(/volume is full .* spec\.storage\.size/);
      expect(failure.lost, 'a full disk is not a lost member').to.equal(undefined);

      // room on its disk: started again on its data, it catches up
      execFileSync('mount', ['-o', 'remount,size=64m', disk]);
      const r = await applyCluster(manifest(), { stateDir, timeoutMs: 60_000 });
      expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
      expect(r.actions.filter((a) => /replace|remove/i.test(a)), 'nothing replaced').to.deep.equal([]);
      const own = rt.state()!.members.find((m) => m.name === 'df-2')!;
      const c = await Client.connect({ endpoints: [`127.0.0.1:${own.clientPort}`] });
      try {
        await waitFor('df-2 caught up', async () => ((await c.get('df/after', { serializable: true })).kvs.length === 1 ? true : undefined), 30_000, 200);
        const got = await c.get('df/', { prefix: true, serializable: true });
        const have = new Map(got.kvs.map((kv) => [Buffer.from(kv.key).toString(), Buffer.from(kv.value).toString()]));
        const missing = [...acked].filter(([k, v]) => have.get(k) !== v).map(([k]) => k);
        expect(missing, `acknowledged writes df-2 lacks (of ${acked.size})`).to.deep.equal([]);
      } finally {
        c.close();
      }
    } finally {
      for (const c of conns) c.close();
    }
  });
});
