// Member replacement through the controller against the real control plane and the test node: a follower's claim
// and pod are deleted under a writer; the StatefulSet gives it an empty volume, its start is refused (its peers
// name it as started: it lost its data), and the operator replaces it under a NEW member ID through a learner; it
// never rejoins under the old one. Every acknowledged write is on every member afterwards; the Events, status and
// `kubectl svc status` show the replacement.
import { expect } from 'chai';
import type { SvcClusterStatus } from '../../operator/api/types.js';
import { statusMain } from '../../operator/cli/status-cmd.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-heal';
const NAME = 'kv';

describe('k8s: a member that lost its volume is replaced (learner, new member ID)', function () {
  this.timeout(600_000);
  const op = useOperator(NS);

  const get = async (): Promise<{ status?: SvcClusterStatus }> => JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'svcc', NAME, '-o', 'json'])) as { status?: SvcClusterStatus };
  const reasons = async (): Promise<string[]> => {
    const list = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'json'])) as { items: Array<{ reason: string }> };
    return list.items.map((e) => e.reason);
  };
  const clientURL = (i: number) => `http://${NAME}-${i}.${NAME}.${NS}.svc:2379`;
  const connect = (urls: string[]) => Client.connect({ endpoints: urls, commandTimeoutMs: 10_000, dialTimeoutMs: 5000 });
  const running = (n: number) =>
    waitFor(`${NAME} Running with ${n} healthy voting members`, async () => {
      const s = (await get()).status;
      return s?.phase === 'Running' && s.ready === `${n}/${n}` && s.members?.length === n && s.members.every((m) => m.healthy && !m.learner) ? s : undefined;
    }, 300_000, 1000);
  /** The 3-member cluster of 3.5.21, applied (again: the second test may run alone) and Running. */
  const threeMembers = async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: NAME, namespace: NS }, spec: { version: '3.5.21', replicas: 3 } }));
    await running(3);
  };
  /** A member that does not lead (the highest or the lowest such ordinal): its name and member ID. */
  const aFollower = async (c: Client, which: 'highest' | 'lowest'): Promise<{ name: string; id: string }> => {
    const leaderId = String((await c.status(clientURL(0))).leader);
    const followers = (await c.memberList({ linearizable: true })).members.filter((m) => String(m.ID) !== leaderId).sort((a, b) => (a.name < b.name ? -1 : 1));
    const f = which === 'lowest' ? followers[0] : followers.at(-1)!;
    return { name: f.name, id: String(f.ID) };
  };

  it('a follower whose claim and pod are deleted comes back under a new member ID with every acknowledged key', async () => {
    await threeMembers();
    const c = await connect([0, 1, 2].map(clientURL));
    let victim: string;
    let oldId: string;
    const acked: string[] = [];
    let writing = true;
    try {
      ({ name: victim, id: oldId } = await aFollower(c, 'highest'));
      // a writer through the members that keep their data, the whole time
      const others = [0, 1, 2].map((i) => `${NAME}-${i}`).filter((n) => n !== victim).map((n) => clientURL(Number(n.slice(-1))));
      const w = await connect(others);
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const key = `w${String(i).padStart(5, '0')}`;
          try {
            await w.put(key, `v${i}`);
            acked.push(key);
          } catch {
            await new Promise((r) => setTimeout(r, 200)); // a failed write is not acknowledged; the next one tries again
          }
        }
      })();
      await op.tb.kubectl(['-n', NS, 'delete', 'pvc', `data-${victim}`, '--wait=false']);
      await op.tb.kubectl(['-n', NS, 'delete', 'pod', victim, '--grace-period=0', '--force', '--wait=false']);
      const replaced = await waitFor(`${victim} replaced`, async () => {
        const s = (await get()).status;
        const m = s?.members?.find((x) => x.name === victim);
        return m?.replaced?.finishedAt !== undefined ? m.replaced : undefined;
      }, 420_000, 2000);
      writing = false;
      await writer;
      w.close();
      expect(replaced.cause).to.equal('AlreadyBootstrapped');
      expect(replaced.previousId).to.equal(BigInt(oldId).toString(16));
    } finally {
      writing = false;
      c.close();
    }
    await running(3);
    expect(acked.length, 'the writer made progress during the replacement').to.be.greaterThan(10);

    const r = await connect([0, 1, 2].map(clientURL));
    try {
      const list = (await r.memberList({ linearizable: true })).members;
      expect(list.map((m) => m.name).sort()).to.deep.equal(['kv-0', 'kv-1', 'kv-2']);
      expect(list.every((m) => !m.isLearner)).to.equal(true);
      const now = list.find((m) => m.name === victim)!;
      expect(String(now.ID), 'a new member ID').to.not.equal(oldId);
      // every acknowledged key on the replaced member itself (a serializable read answers from its own store)
      const one = await connect([clientURL(Number(victim.slice(-1)))]);
      try {
        await waitFor('the replaced member has the last acknowledged write', async () => (await one.get(acked.at(-1)!, { serializable: true })).kvs.length === 1 || undefined, 60_000, 500);
        const got = await one.get('w', { prefix: true, serializable: true, keysOnly: true });
        const have = new Set(got.kvs.map((kv) => kv.key.toString()));
        expect(acked.filter((k) => !have.has(k)), 'acknowledged keys missing on the replaced member').to.deep.equal([]);
      } finally {
        one.close();
      }
    } finally {
      r.close();
    }
    const seen = await reasons();
    for (const reason of ['ReplaceMember', 'MemberReplaced']) expect(seen, reason).to.include(reason);
    const out: string[] = [];
    const code = await statusMain(['status', NAME, '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`], 'kubectl svc status', { write: (s: string) => { out.push(s); return true; } } as unknown as NodeJS.WritableStream);
    expect(code).to.equal(0);
    expect(out.join('')).to.match(new RegExp(`Replaced: +${victim} \\(AlreadyBootstrapped\\).*previous ID ${BigInt(oldId).toString(16)}: a voting member again`));
  });

  it('a member whose volume is deleted under its claim (claim Lost) is replaced once its pod stops', async () => {
    await threeMembers();
    const c = await connect([0, 1, 2].map(clientURL));
    let victim: string;
    let oldId: string;
    try {
      ({ name: victim, id: oldId } = await aFollower(c, 'lowest'));
      await c.put('before-volume-loss', 'kept');
    } finally {
      c.close();
    }
    const pv = (await op.tb.kubectl(['-n', NS, 'get', 'pvc', `data-${victim}`, '-o', 'jsonpath={.spec.volumeName}'])).trim();
    expect(pv).to.not.equal('');
    // the volume goes from under the claim (what a lost disk or a deleted cloud volume looks like to Kubernetes)
    // (deleted first, then its finalizers cleared: a controller may add a finalizer again to an object not being deleted)
    await op.tb.kubectl(['delete', 'pv', pv, '--wait=false']);
    await op.tb.kubectl(['patch', 'pv', pv, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await waitFor(`volume ${pv} gone`, async () => {
      const left = await op.tb.kubectl(['get', 'pv', '--ignore-not-found', '-o', 'name']);
      return !left.includes(pv) || undefined;
    }, 60_000, 1000);
    await waitFor(`claim data-${victim} Lost`, async () => (await op.tb.kubectl(['-n', NS, 'get', 'pvc', `data-${victim}`, '-o', 'jsonpath={.status.phase}'])).trim() === 'Lost' || undefined, 120_000, 1000);
    // a member that runs keeps running on what it has; once its pod goes, it cannot come back on that claim
    expect((await get()).status?.members?.find((m) => m.name === victim)?.replaced?.cause).to.not.equal('VolumeLost');
    await op.tb.kubectl(['-n', NS, 'delete', 'pod', victim, '--grace-period=0', '--force', '--wait=false']);
    const replaced = await waitFor(`${victim} replaced (VolumeLost)`, async () => {
      const m = (await get()).status?.members?.find((x) => x.name === victim);
      return m?.replaced?.cause === 'VolumeLost' && m.replaced.finishedAt !== undefined ? m.replaced : undefined;
    }, 420_000, 2000);
    expect(replaced.previousId).to.equal(BigInt(oldId).toString(16));
    expect(replaced.detail).to.contain(`data-${victim} is Lost`);
    await running(3);
    const one = await connect([clientURL(Number(victim.slice(-1)))]);
    try {
      const list = (await one.memberList({ linearizable: true })).members;
      expect(String(list.find((m) => m.name === victim)!.ID)).to.not.equal(oldId);
      await waitFor('the replaced member has the key', async () => (await one.get('before-volume-loss', { serializable: true })).kvs.length === 1 || undefined, 60_000, 500);
    } finally {
      one.close();
    }
  });
});
