// Quorum-loss recovery through the controller against the real control plane and the test node: a 3-member
// cluster with data loses two members with their claims (the highest ordinals: a StatefulSet drops and adds again only
// its highest members); `kubectl svc recover` refuses the healthy cluster first, then plans without touching, then
// brings the same SvcCluster back from the survivor: its snapshot on the backup claim, the survivor's member id kept,
// 3 voting members, every key, each step an Event and status.recovery.
import { expect } from 'chai';
import { recoverMain } from '../../operator/cli/recover-kube.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-recover';
const NAME = 'kv';

describe('k8s: quorum-loss recovery of an SvcCluster (kubectl svc recover)', function () {
  this.timeout(600_000);
  const op = useOperator(NS);

  const get = () => getSvcCluster(op.tb, NS, NAME);
  const reasons = async (): Promise<string[]> => {
    const list = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'json'])) as { items: Array<{ reason: string }> };
    return list.items.map((e) => e.reason);
  };
  const clientURL = (i: number) => `http://${NAME}-${i}.${NAME}.${NS}.svc:2379`;
  const connect = (n: number) => Client.connect({ endpoints: Array.from({ length: n }, (_, i) => clientURL(i)), commandTimeoutMs: 10_000, dialTimeoutMs: 5000 });
  const running = (n: number) =>
    waitFor(`${NAME} Running with ${n} members`, async () => {
      const s = (await get()).status;
      return s?.phase === 'Running' && s.ready === `${n}/${n}` && s.members?.length === n && s.members.every((m) => m.healthy) ? s : undefined;
    }, 300_000, 1000);
  const recover = async (...args: string[]): Promise<{ code: number; out: string }> => {
    const out: string[] = [];
    const code = await recoverMain(['recover', NAME, '-n', NS, `--kubeconfig=${op.tb.kubeconfigPath}`, ...args], (s) => out.push(s), 'kubectl svc recover');
    return { code, out: out.join('') };
  };

  it('refuses a cluster with quorum; after two of three members lost with their claims, plans, then recovers the same SvcCluster', async () => {
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: NAME, namespace: NS }, spec: { version: '3.4.34', replicas: 3 } }));
    await running(3);
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    const c = await connect(3);
    let survivorId: string;
    try {
      for (const k of keys) await c.put(k, `v-${k}`);
      survivorId = String((await c.status(clientURL(0))).header.member_id);
    } finally {
      c.close();
    }
    const uid = (await get()).metadata.uid;

    // a cluster with quorum: refused by the command, nothing written
    const healthy = await recover();
    expect(healthy.code).to.equal(1);
    expect((await get()).metadata.annotations?.['svc.dev/recover']).to.equal(undefined);

    // two of three lost with their data: claims and pods deleted (they come back empty and cannot join)
    await op.tb.kubectl(['-n', NS, 'delete', 'pvc', `data-${NAME}-1`, `data-${NAME}-2`, '--wait=false']);
    await op.tb.kubectl(['-n', NS, 'delete', 'pod', `${NAME}-1`, `${NAME}-2`, '--grace-period=0', '--force', '--wait=false']);
    const dry = await waitFor('the plan of a cluster without quorum', async () => {
      const r = await recover('--dry-run');
      return r.code === 0 ? r : undefined;
    }, 120_000, 2000);
    expect(dry.out).to.match(/^kv-0 \(survivor\) +yes +\d+ +\d+ +nothing: its data becomes the cluster's/m);
    expect(dry.out).to.contain('dry run: nothing was touched');
    expect((await get()).metadata.annotations?.['svc.dev/recover']).to.equal(undefined);

    const run = await recover('--token=r1', '--wait=420');
    expect(run.code, run.out).to.equal(0);
    expect(run.out).to.match(/recovered from kv-0; its snapshot before the recovery: pvc:\/\/\S+kv-0-recover-\S+\.db/);

    const st = await running(3);
    const stored = await get();
    expect(stored.metadata.uid, 'the same SvcCluster').to.equal(uid);
    expect(stored.status!.recovery).to.include({ request: 'r1', survivor: 'kv-0', step: 'recoverComplete' });
    expect(stored.status!.recovery!.snapshot).to.match(/^pvc:\/\//);
    expect(st.members!.map((m) => m.name)).to.deep.equal(['kv-0', 'kv-1', 'kv-2']);
    const r = await connect(3);
    try {
      const list = (await r.memberList({ linearizable: true })).members;
      expect(list.map((m) => m.name).sort()).to.deep.equal(['kv-0', 'kv-1', 'kv-2']);
      expect(list.every((m) => !m.isLearner)).to.equal(true);
      expect(String(list.find((m) => m.name === 'kv-0')!.ID)).to.equal(survivorId);
      const got = await r.get('k', { prefix: true });
      expect(got.kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).to.deep.equal(keys.map((k) => `${k}=v-${k}`));
    } finally {
      r.close();
    }
    const seen = await reasons();
    for (const reason of ['RecoverSnapshot', 'ForceNewCluster', 'RetireMember', 'EndForceNewCluster', 'AddMember', 'Recovered']) expect(seen, reason).to.include(reason);
    // the template no longer carries the flag
    const args = await op.tb.kubectl(['-n', NS, 'get', 'statefulset', NAME, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']);
    expect(args).to.not.contain('--force-new-cluster');
  });
});
