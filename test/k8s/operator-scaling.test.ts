// Scaling through the controller against the real control plane and the test node: a 3-member cluster with
// data grows to 5 (members added one at a time, each joining the existing cluster) and shrinks back to 3 (the
// highest ordinals removed, their PVCs deleted), every key intact; a 1-member cluster grows to 3 across an
// operator restart between MemberAdd and the StatefulSet change.
import { expect } from 'chai';
import { MemberClient } from '../../operator/members/index.js';
import { Client } from '../../server/client/index.js';
import { useOperator } from './operator/fixture.js';
import { getSvcCluster } from './operator/helpers.js';
import { waitFor } from '../../harness/process.js';

const NS = 'svcc-scale';

describe('k8s: scaling an SvcCluster (member add/remove one at a time)', function () {
  this.timeout(420_000);
  const op = useOperator(NS);

  const get = (name: string) => getSvcCluster(op.tb, NS, name);
  const reasons = async (name: string): Promise<string[]> => {
    const list = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: Array<{ reason: string }> };
    return list.items.map((e) => e.reason);
  };
  const clientURL = (name: string, i: number) => `http://${name}-${i}.${name}.${NS}.svc:2379`;
  const connect = (name: string, n: number) => Client.connect({ endpoints: Array.from({ length: n }, (_, i) => clientURL(name, i)), commandTimeoutMs: 10_000, dialTimeoutMs: 5000 });
  const running = (name: string, n: number) =>
    waitFor(`${name} Running with ${n} members`, async () => {
      const s = (await get(name)).status;
      return s?.phase === 'Running' && s.ready === `${n}/${n}` && s.members?.length === n && s.members.every((m) => m.healthy) ? s : undefined;
    }, 300_000, 1000);
  const scale = (name: string, replicas: number) => op.tb.kubectl(['-n', NS, 'patch', 'svcc', name, '--type=merge', '-p', JSON.stringify({ spec: { replicas } })]);
  const memberNames = async (name: string, n: number): Promise<string[]> => {
    const c = await connect(name, n);
    try {
      return (await c.memberList({ linearizable: true })).members.map((m) => m.name).sort();
    } finally {
      c.close();
    }
  };
  const claims = async (name: string): Promise<string[]> =>
    (await op.tb.kubectl(['-n', NS, 'get', 'pvc', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ').filter((c) => c.startsWith(`data-${name}-`)).sort();
  const steps = (name: string, kind: string): string[] =>
    op.logs.filter((l) => l.msg === 'step' && l.step === kind && l.cluster === `${NS}/${name}`).map((l) => String(l.line));


  it('3 -> 5 -> 3: members added and removed one at a time, their PVCs gone, every key intact', async () => {
    const name = 'kv';
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.4.34', replicas: 3 } }));
    await running(name, 3);
    const c = await connect(name, 3);
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    try {
      for (const k of keys) await c.put(k, `v-${k}`);
    } finally {
      c.close();
    }

    await scale(name, 5);
    const five = await running(name, 5);
    expect(five.members!.map((m) => m.name)).to.deep.equal([0, 1, 2, 3, 4].map((i) => `${name}-${i}`));
    expect(five.members!.filter((m) => m.leader)).to.have.length(1);
    expect(await memberNames(name, 5)).to.deep.equal([0, 1, 2, 3, 4].map((i) => `${name}-${i}`));
    // one add per new member, in ordinal order, each once
    expect(steps(name, 'addMember').map((l) => /add member (\S+)/.exec(l)![1])).to.deep.equal([`${name}-3`, `${name}-4`]);
    expect((await reasons(name)).filter((r) => r === 'AddMember')).to.have.length(2);
    // the last joiner started on --initial-cluster-state=existing with the members before it plus itself
    const cm = JSON.parse(await op.tb.kubectl(['-n', NS, 'get', 'configmap', `${name}-config`, '-o', 'json'])) as { data: Record<string, string> };
    expect(cm.data.INITIAL_CLUSTER_STATE).to.equal('existing');
    expect(cm.data.INITIAL_CLUSTER.split(',').map((e) => e.split('=')[0])).to.deep.equal([0, 1, 2, 3, 4].map((i) => `${name}-${i}`));
    expect(JSON.parse((await get(name)).metadata.annotations!['svc.dev/records']).scaling).to.include({ replicas: 5, step: 'addMember', member: `${name}-4` });

    await scale(name, 3);
    const three = await running(name, 3);
    expect(three.members!.map((m) => m.name)).to.deep.equal([0, 1, 2].map((i) => `${name}-${i}`));
    expect(await memberNames(name, 3)).to.deep.equal([0, 1, 2].map((i) => `${name}-${i}`));
    expect(steps(name, 'removeMember').map((l) => /remove member (\S+)/.exec(l)![1])).to.deep.equal([`${name}-4`, `${name}-3`]);
    expect((await reasons(name)).filter((r) => r === 'RemoveMember')).to.have.length(2);
    expect(await op.tb.kubectl(['-n', NS, 'get', 'statefulset', name, '-o', 'jsonpath={.spec.replicas}'])).to.equal('3');
    await waitFor('the PVCs of kv-3 and kv-4 gone', async () => {
      const left = await claims(name);
      return left.length === 3 ? left : undefined;
    }, 60_000, 500);
    expect(await claims(name)).to.deep.equal([0, 1, 2].map((i) => `data-${name}-${i}`));

    const r = await connect(name, 3);
    try {
      const got = await r.get('k', { prefix: true });
      expect(got.kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).to.deep.equal(keys.map((k) => `${k}=v-${k}`));
    } finally {
      r.close();
    }
    const st = (await get(name)).status!;
    expect(st.conditions!.find((x) => x.type === 'Available')).to.include({ status: 'True' });
    expect(st.lastError).to.equal(undefined);
  });

  it('1 -> 3 with the operator stopped between "member added" and "pod started": the member is started, not added twice', async () => {
    const name = 'one';
    await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec: { version: '3.4.34', replicas: 1 } }));
    await running(name, 1);
    const c = await connect(name, 1);
    try {
      await c.put('solo', 'yes');
    } finally {
      c.close();
    }
    // What an operator that dies right after MemberAdd leaves: one-1 in the member list, no pod for it.
    await op.stopController();
    const mc = new MemberClient();
    try {
      await mc.memberAdd(clientURL(name, 0), `http://${name}-1.${name}.${NS}.svc:2380`);
    } finally {
      mc.close();
    }
    await scale(name, 3);
    await op.startController();
    await running(name, 3);
    expect(await memberNames(name, 3)).to.deep.equal([0, 1, 2].map((i) => `${name}-${i}`));
    expect(steps(name, 'startMember').map((l) => /start member ([^\s,]+)/.exec(l)![1])).to.deep.equal([`${name}-1`]);
    expect(steps(name, 'addMember').map((l) => /add member (\S+)/.exec(l)![1])).to.deep.equal([`${name}-2`]);
    const r = await Client.connect({ endpoints: [clientURL(name, 2)], commandTimeoutMs: 10_000, dialTimeoutMs: 5000 });
    try {
      expect((await r.get('solo')).kvs[0].value.toString()).to.equal('yes');
    } finally {
      r.close();
    }
  });
});
