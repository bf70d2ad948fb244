// Quorum-loss recovery, pure (operator/planner/recovery.ts): when a request is refused, which member survives and
// what the others lose, the steps in order from the record and the observation, and the scale-up that brings the
// lost members back under their names (the lowest free ordinal first).
import { expect } from 'chai';
import { withDefaults } from '../../../operator/api/validate.js';
import { plan } from '../../../operator/planner/plan.js';
import { beginRecovery, recoveryLines, recoveryPlan, recoveryRefusal, recoveryStep } from '../../../operator/planner/recovery.js';
import type { ObservedCluster, ObservedMember, RecoveryProgress } from '../../../operator/planner/types.js';
import { desiredState } from '../../../operator/runtime/kubernetes/desired.js';
import { FORCE_ANNOTATION, forcedMember, recoveryJoin } from '../../../operator/runtime/kubernetes/kube-recovery.js';
import { recoveryStatus } from '../../../operator/controller/controller.js';

const V = '3.5.21';
const member = (name: string, over: Partial<ObservedMember> = {}): ObservedMember => ({
  name, id: String(100 + Number(name.slice(-1))), configuredVersion: V, release: V, clusterVersion: '3.5.0', running: true, healthy: true, leader: false, appliedIndex: 50, revision: 20, ...over,
});
const down = (name: string, over: Partial<ObservedMember> = {}): ObservedMember => ({ name, configuredVersion: V, running: false, healthy: false, leader: false, dataLost: true, ...over });
const list = (...names: string[]) => names.map((n) => ({ id: String(100 + Number(n.slice(-1))), member: n, started: true }));

/** kv-0 and kv-2 lost (killed, data gone), kv-1 answering without a leader. */
const lost = (extra: Partial<ObservedCluster> = {}): ObservedCluster => ({
  now: 1000, members: [down('kv-0'), member('kv-1', { healthy: false, appliedIndex: 90, revision: 31 }), down('kv-2')], clusterMembers: list('kv-0', 'kv-1', 'kv-2'), ...extra,
});
const spec = withDefaults({ version: V, replicas: 3 });

describe('operator/planner: quorum-loss recovery', () => {
  it('refuses a cluster with quorum, a silent member that still has its data, and a cluster where no member answers', () => {
    const healthy: ObservedCluster = { now: 0, members: [member('kv-0', { leader: true }), member('kv-1'), down('kv-2')] };
    expect(recoveryRefusal(healthy, 'kv')).to.equal('cluster kv has quorum (kv-0 leads and is healthy): recover is only for a cluster that lost quorum, and nothing was touched; member(s) kv-2 are down: the operator\'s loop (local apply, or the controller) starts them again');
    const intact = lost({ members: [down('kv-0', { dataLost: false }), member('kv-1', { healthy: false }), down('kv-2')] });
    expect(recoveryRefusal(intact, 'kv')).to.match(/^member\(s\) kv-0 do not answer but still have their data: .*start them first/);
    expect(recoveryRefusal({ now: 0, members: [down('kv-0'), down('kv-1')] }, 'kv')).to.match(/^no member of kv answers Maintenance.Status: start a member whose data is intact first/);
    expect(recoveryRefusal({ now: 0, members: [] }, 'kv')).to.equal('there is no cluster kv to recover');
    // a silent member whose data the runtime cannot see (Kubernetes) does not hold a recovery back: its loss is "unknown"
    expect(recoveryRefusal(lost({ members: [down('kv-0', { dataLost: undefined }), member('kv-1', { healthy: false }), down('kv-2')] }), 'kv')).to.equal(undefined);
  });

  it('names the survivor with the highest applied index (ties: the lower name) and what each other member loses', () => {
    const o: ObservedCluster = { now: 0, members: [member('kv-0', { appliedIndex: 70, healthy: false }), member('kv-1', { appliedIndex: 90, healthy: false }), member('kv-2', { appliedIndex: 90, healthy: false }), down('kv-3', { dataLost: undefined })] };
    const p = recoveryPlan(o);
    expect(p.survivor.name).to.equal('kv-1');
    expect(p.report.map((m) => [m.name, m.reachable, m.appliedIndex, m.loses])).to.deep.equal([
      ['kv-0', true, 70, 'nothing applied (applied 70 <= survivor\'s 90); its data is dropped and it joins again, empty'],
      ['kv-1', true, 90, 'nothing: its data becomes the cluster\'s'],
      ['kv-2', true, 90, 'nothing applied (applied 90 <= survivor\'s 90); its data is dropped and it joins again, empty'],
      ['kv-3', false, undefined, 'unknown: it does not answer; anything it applied beyond index 90 is lost; it joins again, empty'],
    ]);
    const lines = recoveryLines(p);
    expect(lines[0]).to.match(/^MEMBER +REACHABLE +APPLIED +REVISION +LOSES$/);
    expect(lines[2]).to.match(/^kv-1 \(survivor\) +yes +90 +20 +nothing/);
    expect(lines.at(-1)).to.match(/^survivor: kv-1 \(the highest applied index, 90\); steps: snapshot of kv-1, restart it in place with --force-new-cluster/);
  });

  it('acts only on a new request of a cluster without quorum, and never twice on one token', () => {
    expect(recoveryStep(lost())).to.equal(undefined); // no request
    expect(recoveryStep(lost({ recovery: { request: 't1' } }))).to.deep.equal({ kind: 'recoverSnapshot', member: 'kv-1', token: 't1' });
    const healthy: ObservedCluster = { now: 0, members: [member('kv-0', { leader: true }), member('kv-1'), member('kv-2')], recovery: { request: 't1' } };
    expect(plan(spec, healthy, undefined).kind).to.not.equal('recoverSnapshot');
    const done: RecoveryProgress = { token: 't1', survivor: 'kv-1', lost: [], report: [], step: 'recoverComplete', startedAt: 1, finishedAt: 2 };
    expect(recoveryStep(lost({ recovery: { request: 't1', record: done } }))).to.equal(undefined);
    expect(recoveryStep(lost({ recovery: { request: 't2', record: done } }))).to.deep.equal({ kind: 'recoverSnapshot', member: 'kv-1', token: 't2' });
  });

  it('records the survivor and the ids it drops, then goes snapshot -> force -> restart without the flag -> grow back -> complete', () => {
    const o = lost({ recovery: { request: 't1' } });
    const rec = beginRecovery(undefined, { kind: 'recoverSnapshot', member: 'kv-1', token: 't1' }, o, 5)!;
    expect(rec).to.deep.include({ token: 't1', survivor: 'kv-1', survivorId: '101', lost: [{ name: 'kv-0', id: '100' }, { name: 'kv-2', id: '102' }], step: 'recoverSnapshot', startedAt: 5 });
    expect(rec.report.map((m) => m.name)).to.deep.equal(['kv-0', 'kv-1', 'kv-2']);
    // snapshot begun, not recorded: taken again
    expect(plan(spec, lost({ recovery: { request: 't1', record: rec } }), undefined)).to.deep.equal({ kind: 'recoverSnapshot', member: 'kv-1', token: 't1' });
    const snapped: RecoveryProgress = { ...rec, snapshot: { location: '/r/kv-1.db', member: 'kv-1', revision: 31, size: 1, sha256: 'a', time: 't' } };
    expect(plan(spec, lost({ recovery: { request: 't1', record: snapped } }), undefined)).to.deep.equal({ kind: 'forceNewCluster', member: 'kv-1', lost: ['kv-0', 'kv-2'], token: 't1' });
    // the survivor silent after its forced start (or restarting): wait, never a second force
    const forcing: RecoveryProgress = { ...snapped, step: 'forceNewCluster' };
    const starting: ObservedCluster = { now: 2, members: [member('kv-1', { healthy: false, forcedNewCluster: true, appliedIndex: undefined })], recovery: { request: 't1', record: forcing } };
    expect(plan(spec, starting, undefined)).to.include({ kind: 'wait', code: 'MemberStarting' });
    // alone in its list and leading: restart it without the flag
    const alone: ObservedCluster = { now: 3, members: [member('kv-1', { leader: true, forcedNewCluster: true })], clusterMembers: list('kv-1'), clusterMembersByLeader: true, recovery: { request: 't1', record: forcing } };
    expect(plan(spec, alone, undefined)).to.deep.equal({ kind: 'endForceNewCluster', member: 'kv-1', version: V });
    // restarting without the flag: no list for a moment, and still no second force
    const ending: RecoveryProgress = { ...forcing, step: 'endForceNewCluster' };
    const restarting: ObservedCluster = { now: 4, members: [member('kv-1', { healthy: false, appliedIndex: undefined })], recovery: { request: 't1', record: ending } };
    expect(plan(spec, restarting, undefined).kind).to.equal('wait');
    // grow back: the lowest free ordinal first (the lost members come back under their names), then kv-2
    const grow: ObservedCluster = { ...alone, members: [member('kv-1', { leader: true })], recovery: { request: 't1', record: ending } };
    expect(plan(spec, grow, undefined)).to.deep.equal({ kind: 'addMember', member: 'kv-0', join: ['kv-1', 'kv-0'] });
    // (the members added report the ids the cluster gave them)
    const two: ObservedCluster = { ...grow, members: [member('kv-0', { id: '900' }), member('kv-1', { leader: true })], clusterMembers: [{ id: '900', member: 'kv-0', started: true }, ...list('kv-1')] };
    expect(plan(spec, two, undefined)).to.deep.equal({ kind: 'addMember', member: 'kv-2', join: ['kv-0', 'kv-1', 'kv-2'] });
    const three: ObservedCluster = { ...two, members: [member('kv-0', { id: '900' }), member('kv-1', { leader: true }), member('kv-2', { id: '901' })], clusterMembers: [{ id: '900', member: 'kv-0', started: true }, ...list('kv-1'), { id: '901', member: 'kv-2', started: true }] };
    expect(plan(spec, three, undefined)).to.deep.equal({ kind: 'recoverComplete', member: 'kv-1', token: 't1' });
    const closed = beginRecovery(ending, { kind: 'recoverComplete', member: 'kv-1', token: 't1' }, three, 9)!;
    expect(closed).to.include({ step: 'recoverComplete', finishedAt: 9 });
    expect(plan(spec, { ...three, recovery: { request: 't1', record: closed } }, undefined)).to.deep.equal({ kind: 'steady', version: V });
  });

  it('drops lost members the runtime still runs from the top ordinal down, before the survivor restarts without the flag; one below the survivor waits', () => {
    const forcing: RecoveryProgress = { token: 't1', survivor: 'kv-1', survivorId: '101', lost: [{ name: 'kv-0', id: '100' }, { name: 'kv-2', id: '102' }], report: [], step: 'forceNewCluster', startedAt: 1, snapshot: { location: 'pvc://b/kv-1.db', member: 'kv-1', revision: 1, size: 1, sha256: 'a', time: 't' } };
    const pods: ObservedCluster = {
      now: 5, members: [down('kv-0', { dataLost: undefined }), member('kv-1', { leader: true, forcedNewCluster: true }), down('kv-2', { dataLost: undefined })],
      clusterMembers: list('kv-1'), clusterMembersByLeader: true, recovery: { request: 't1', record: forcing },
    };
    expect(plan(spec, pods, undefined)).to.deep.equal({ kind: 'retireMember', member: 'kv-2' });
    const below = plan(spec, { ...pods, members: pods.members.slice(0, 2) }, undefined);
    expect(below).to.include({ kind: 'wait', code: 'MemberNotInCluster' });
    expect((below as { reason: string }).reason).to.match(/^recovery t1: member\(s\) kv-0 lost their data and are below a member that kept its place; a StatefulSet drops and adds again only its highest member/);
  });

  it('Kubernetes: the template carries --force-new-cluster only during the forced start, empty members join the survivor alone, status.recovery', () => {
    const rec: RecoveryProgress = { token: 't1', survivor: 'kv-0', survivorId: '100', lost: [{ name: 'kv-1', id: '101' }, { name: 'kv-2', id: '102' }], report: [], step: 'recoverSnapshot', startedAt: Date.UTC(2026, 0, 1) };
    // before anything is touched: the template and the ConfigMap as they were
    expect(recoveryJoin(rec)).to.equal(undefined);
    expect(forcedMember(rec)).to.equal(undefined);
    const forcing = { ...rec, step: 'forceNewCluster' as const };
    expect(recoveryJoin(forcing)).to.deep.equal(['kv-0']);
    expect(forcedMember(forcing)).to.equal('kv-0');
    expect(forcedMember({ ...forcing, step: 'endForceNewCluster' })).to.equal(undefined);
    expect(recoveryJoin({ ...forcing, step: 'endForceNewCluster' })).to.deep.equal(['kv-0']);

    type Obj = { kind: string; data?: Record<string, string>; spec?: { template: { metadata: { annotations: Record<string, string> }; spec: { containers: Array<{ args: string[] }> } } } };
    const ref = { name: 'kv', namespace: 'ns', uid: 'u', spec };
    const objs = (live: object) => desiredState(ref, V, { replicas: 3, ...live }).objects as unknown as Obj[];
    const forced = objs({ join: recoveryJoin(forcing), force: forcedMember(forcing) });
    const sts = forced.find((o) => o.kind === 'StatefulSet')!.spec!.template;
    expect(sts.spec.containers[0].args).to.include('--force-new-cluster');
    expect(sts.metadata.annotations[FORCE_ANNOTATION]).to.equal('kv-0');
    const cm = forced.find((o) => o.kind === 'ConfigMap')!.data!;
    expect(cm.INITIAL_CLUSTER).to.equal('kv-0=http://kv-0.kv.ns.svc:2380');
    expect(cm.INITIAL_CLUSTER_STATE).to.equal('existing');
    const plain = objs({ join: recoveryJoin(forcing) }).find((o) => o.kind === 'StatefulSet')!.spec!.template;
    expect(plain.spec.containers[0].args).to.not.include('--force-new-cluster');
    expect(plain.metadata.annotations[FORCE_ANNOTATION]).to.equal(undefined);
    // the forced start changes no revision (no rollout follows it)
    expect(desiredState(ref, V, { replicas: 3, force: 'kv-0' }).revision).to.deep.equal(desiredState(ref, V, { replicas: 3 }).revision);

    expect(recoveryStatus('t2', rec, 'cluster ns/kv has quorum')).to.deep.equal({ request: 't2', refused: 'cluster ns/kv has quorum' });
    expect(recoveryStatus('t1', { ...forcing, snapshot: { location: 'pvc://kv-backups/ns/kv/kv-0-recover.db', member: 'kv-0', revision: 1, size: 1, sha256: 'a', time: 't' }, finishedAt: Date.UTC(2026, 0, 1, 0, 5) }, undefined)).to.deep.equal({
      request: 't1', survivor: 'kv-0', step: 'forceNewCluster', snapshot: 'pvc://kv-backups/ns/kv/kv-0-recover.db', startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:05:00.000Z',
    });
    expect(recoveryStatus(undefined, undefined, undefined)).to.equal(undefined);
  });
});
