// The Kubernetes runtime's side of healing, over a recording fake of the API: a member whose container last exited
// refused as already bootstrapped, or on a corrupt database, is lost (quoting its own last log line); a running
// container's earlier exit is not; resetMember names the running cluster in the ConfigMap (the engine keeps it in the
// scaling record) before it deletes the claim and then the pod; an earlier operator's annotations become the record
// document.
import { expect } from 'chai';
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { withDefaults } from '../../../operator/api/validate.js';
import { desiredState } from '../../../operator/runtime/kubernetes/desired.js';
import type { KubeApi } from '../../../operator/runtime/kubernetes/kube-api.js';
import { KubeRuntime, NODE_LOSS_GRACE_MS, podLoss, volumeLoss } from '../../../operator/runtime/kubernetes/kube-runtime.js';
import { migrateRecords, RECORDS_ANNOTATION, KubeRecords } from '../../../operator/runtime/kubernetes/kube-records.js';
import { memoryRecords } from '../../../operator/runtime/memory-records.js';
import type { ClusterRef, KubeObject } from '../../../operator/runtime/kubernetes/manifests.js';
import { can } from '../../../operator/runtime/runtime.js';

const ref: ClusterRef = { name: 'kv', namespace: 'ns', uid: 'u1', spec: withDefaults({ version: '3.5.21', replicas: 3 }) };
const REFUSAL = JSON.stringify({ level: 'error', msg: 'member 5e3 has already been bootstrapped: the running cluster has a member with this ID, but its data dir /var/lib/svc holds no data' });

function pod(name: string, state: 'running' | 'waiting', lastMessage?: string, exitCode = 1): V1Pod {
  return {
    metadata: { name, annotations: {}, labels: { 'svc.dev/release': '3.5.21' } },
    status: {
      phase: 'Running',
      containerStatuses: [{
        name: 'svc', image: 'svc:v3.5.21', imageID: '', ready: state === 'running', restartCount: 4,
        state: state === 'running' ? { running: {} } : { waiting: { reason: 'CrashLoopBackOff' } },
        ...(lastMessage !== undefined ? { lastState: { terminated: { exitCode, message: `${JSON.stringify({ level: 'info', msg: 'starting svc' })}\n${lastMessage}\n` } } } : {}),
      }],
    },
  };
}

/** A KubeApi that answers from `pods` and the desired StatefulSet, and records every write. */
function fakeApi(pods: V1Pod[], claims: Record<string, V1PersistentVolumeClaim> = {}) {
  const calls: string[] = [];
  const sts = desiredState(ref, '3.5.21', { replicas: 3 }).objects.find((o) => o.kind === 'StatefulSet') as unknown as V1StatefulSet;
  const api = {
    readStatefulSet: async () => sts,
    listPods: async () => pods,
    applyAll: async (objs: KubeObject[]) => {
      const cm = objs.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
      calls.push(`apply ConfigMap ${cm.data.INITIAL_CLUSTER_STATE} ${cm.data.INITIAL_CLUSTER.split(',').map((e) => e.split('=')[0]).join(',')}`);
      return objs.length;
    },
    patchClusterAnnotation: async (_ns: string, _name: string, key: string, value: string | null) => { calls.push(`annotate ${key} ${value}`); },
    deleteClaim: async (_ns: string, name: string) => { calls.push(`delete pvc ${name}`); },
    deletePod: async (_ns: string, name: string) => { calls.push(`delete pod ${name}`); },
    patchPodLabel: async (_ns: string, name: string, key: string, value: string) => { calls.push(`label ${name} ${key}=${value}`); },
    readClaim: async (_ns: string, name: string) => claims[name],
  };
  return { api: api as unknown as KubeApi, calls };
}

describe('operator kubernetes runtime: healing', () => {
  it('a container that last exited refused as already bootstrapped, or on a corrupt db, is lost, quoting its own line', async () => {
    const corrupt = JSON.stringify({ level: 'error', msg: 'database file /var/lib/svc/member/snap/db is corrupt (its first meta page has no lmdb magic)' });
    const { api } = fakeApi([pod('kv-0', 'running'), pod('kv-1', 'waiting', REFUSAL), pod('kv-2', 'waiting', corrupt)]);
    const rt = new KubeRuntime(api, ref, { snapshotDir: '/tmp', records: memoryRecords() });
    const ms = await rt.members();
    expect(ms[0].lost).to.equal(undefined);
    expect(ms[1].lost).to.deep.include({ cause: 'AlreadyBootstrapped' });
    expect(ms[1].lost!.detail).to.equal('its start was refused: error: member 5e3 has already been bootstrapped: the running cluster has a member with this ID, but its data dir /var/lib/svc holds no data');
    expect(ms[2].lost).to.deep.include({ cause: 'DataCorrupt' });
    // the failure quotes the member's own last line, not only its exit
    expect(ms[1].failure).to.match(/restarted 4 times \(last exit 1\); its last log line: error: member 5e3 has already been bootstrapped/);
  });

  it('an earlier failed exit of a container running again, or a clean exit, is no loss', () => {
    expect(podLoss(pod('kv-1', 'running', REFUSAL))).to.equal(undefined);
    expect(podLoss(pod('kv-1', 'waiting', REFUSAL, 0))).to.equal(undefined);
    expect(podLoss(pod('kv-1', 'waiting', JSON.stringify({ level: 'error', msg: 'listen EADDRINUSE' })))).to.equal(undefined);
  });

  it('a member that does not run whose claim is Lost, or whose pod cannot be scheduled onto its volume\'s node past the grace period, is lost', async () => {
    const lostClaim: V1PersistentVolumeClaim = { metadata: { name: 'data-kv-2' }, status: { phase: 'Lost' } };
    const pending = (message: string, ageMs: number): V1Pod => ({
      metadata: { name: 'kv-2', annotations: {}, labels: {} },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: new Date(Date.now() - ageMs) }] },
    });
    const { api } = fakeApi([pod('kv-0', 'running'), pod('kv-1', 'running'), pending('0/1 nodes are available: 1 Insufficient cpu.', 0)], { 'data-kv-2': lostClaim });
    const ms = await new KubeRuntime(api, ref, { snapshotDir: '/tmp', records: memoryRecords() }).members();
    expect(ms[2].lost).to.deep.include({ cause: 'VolumeLost' });
    expect(ms[2].lost!.detail).to.contain('data-kv-2 is Lost');
    const affinity = '0/1 nodes are available: 1 node(s) had volume node affinity conflict.';
    expect(volumeLoss(pending(affinity, NODE_LOSS_GRACE_MS + 60_000), undefined, Date.now())).to.deep.include({ cause: 'NodeLost' });
    expect(volumeLoss(pending(affinity, 60_000), undefined, Date.now()), 'within the grace period').to.equal(undefined);
    expect(volumeLoss(pending('0/1 nodes are available: 1 Insufficient cpu.', NODE_LOSS_GRACE_MS * 2), undefined, Date.now()), 'a full node is no loss').to.equal(undefined);
    expect(volumeLoss(undefined, { status: { phase: 'Bound' } }, Date.now())).to.equal(undefined);
  });

  it('until the record says the cluster formed members bootstrap a new cluster; from then on they join (an emptied claim fails closed)', async () => {
    const { api, calls } = fakeApi([pod('kv-0', 'running'), pod('kv-1', 'running'), pod('kv-2', 'running')]);
    const rt = new KubeRuntime(api, ref, { snapshotDir: '/tmp', records: memoryRecords() });
    await rt.createCluster(ref.spec);
    expect(calls.at(-1)).to.equal('apply ConfigMap new kv-0,kv-1,kv-2');
    const all = fakeApi([pod('kv-0', 'running'), pod('kv-1', 'running'), pod('kv-2', 'running')]);
    const formed = new KubeRuntime(all.api, ref, { snapshotDir: '/tmp', records: memoryRecords({ formed: new Date(0).toISOString() }) });
    await formed.prepare();
    expect(all.calls.at(-1)).to.equal('apply ConfigMap existing kv-0,kv-1,kv-2');
    // pods without the serving label (an older operator's) are labelled before the client Service selects on it
    expect(all.calls.filter((c) => c.startsWith('label '))).to.deep.equal(['label kv-0 svc.dev/serving=true', 'label kv-1 svc.dev/serving=true', 'label kv-2 svc.dev/serving=true']);
  });

  it('resetMember: the ConfigMap joins the running cluster, then the claim, then the pod go', async () => {
    const { api, calls } = fakeApi([pod('kv-0', 'running'), pod('kv-1', 'waiting', REFUSAL), pod('kv-2', 'running')]);
    const rt = new KubeRuntime(api, ref, { snapshotDir: '/tmp', records: memoryRecords() });
    expect(can(rt, 'healing')).to.equal(true);
    await rt.resetMember('kv-1', ['kv-0', 'kv-1', 'kv-2']);
    expect(calls).to.deep.equal([
      'apply ConfigMap existing kv-0,kv-1,kv-2',
      'delete pvc data-kv-1',
      'delete pod kv-1',
    ]);
    // the next pass keeps the join list (the scaling record), and the start only keeps it applied
    calls.length = 0;
    await rt.startReplacement('kv-1', ['kv-0', 'kv-1', 'kv-2']);
    expect(calls).to.deep.equal(['apply ConfigMap existing kv-0,kv-1,kv-2']);
  });

  it('an earlier operator\'s annotations (and status.backups) become the record document; malformed ones are dropped', () => {
    const rec = { 'kv-1': { member: 'kv-1', oldId: '7', cause: 'DataLost' as const, detail: 'gone', startedAt: 5 } };
    const progress = { from: '3.4.34', to: '3.5.21', step: 'snapshot' as const, startedAt: 1, restarts: {}, membersDone: [] };
    const backups = { claim: 'kv-backups', lastRequest: 'r1' };
    expect(migrateRecords({
      'svc.dev/replacements': JSON.stringify(rec), 'svc.dev/upgrade-progress': JSON.stringify(progress), 'svc.dev/hibernated': '3', 'svc.dev/formed': 'T',
      'svc.dev/rollout': 'not json', 'svc.dev/scaling': '[1]', 'svc.dev/maintenance': '7',
    }, { backups })).to.deep.equal({ replacements: rec, progress, hibernated: 3, formed: 'T', backups });
    expect(migrateRecords({ 'svc.dev/hibernated': 'x' }, undefined)).to.deep.equal({});
  });

  it('the record document is written with a resourceVersion precondition; the earlier annotations go with the first save', async () => {
    const patches: Array<{ annotations: Record<string, string | null>; rv: string }> = [];
    const api = {
      patchClusterRecords: async (_ns: string, _name: string, annotations: Record<string, string | null>, rv: string) => {
        patches.push({ annotations, rv });
        return String(Number(rv) + 1);
      },
    } as unknown as KubeApi;
    const records = new KubeRecords(api, 'ns', 'kv');
    const old = { metadata: { name: 'kv', resourceVersion: '10', annotations: { 'svc.dev/formed': 'T', 'svc.dev/recover': 'tok' } } };
    const store = records.at(old);
    const doc = await store.load();
    expect(doc.records).to.deep.equal({ formed: 'T' });
    expect(doc.requests).to.deep.equal({ recover: 'tok' });
    expect(await store.save({ formed: 'T', hibernated: 3 }, doc.version)).to.equal('11');
    expect(patches).to.deep.equal([{ annotations: { 'svc.dev/formed': null, [RECORDS_ANNOTATION]: '{"formed":"T","hibernated":3}' }, rv: '10' }]);
    // an informer's copy older than this process's write is not believed: the write is
    const stale = await records.at(old).load();
    expect(stale.records).to.deep.equal({ formed: 'T', hibernated: 3 });
    expect(stale.version).to.equal('11');
    const fresh = await records.at({ metadata: { name: 'kv', resourceVersion: '12', annotations: { [RECORDS_ANNOTATION]: '{"formed":"T"}' } } }).load();
    expect(fresh).to.deep.include({ records: { formed: 'T' }, version: '12' });
  });
});
