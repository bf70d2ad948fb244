// SvcCluster status from an observation: phase, conditions, printer-column fields, and stability (an equal
// observation gives an equal status, so an unchanged cluster is not written).
import { expect } from 'chai';
import { canonical, computeStatus, errorLine, stoppedStatus, type StatusInput } from '../../../operator/controller/status.js';
import type { ObservedMember } from '../../../operator/planner/types.js';

function member(name: string, release: string, leader = false, healthy = true): ObservedMember {
  return { name, configuredVersion: release, running: true, release, clusterVersion: '3.4.0', healthy, leader, appliedIndex: 10, id: '1' };
}

function input(members: ObservedMember[], over: Partial<StatusInput> = {}): StatusInput {
  return {
    generation: 2, spec: { version: '3.4.34', replicas: 3 }, observed: { now: 0, members },
    pods: new Map(members.map((m) => [m.name, { image: `svc:v${m.release}`, ready: m.healthy }])),
    step: { kind: 'steady', version: '3.4.34' }, now: new Date('2026-01-01T00:00:00Z'), ...over,
  };
}

describe('operator controller: status', () => {
  const ms = [member('kv-0', '3.4.34'), member('kv-1', '3.4.34', true), member('kv-2', '3.4.34')];

  it('a steady healthy cluster is Running and Available, with the columns filled in', () => {
    const s = computeStatus(input(ms));
    expect(s).to.include({ phase: 'Running', ready: '3/3', leader: 'kv-1', clusterVersion: '3.4.0', currentVersion: '3.4.34', observedGeneration: 2 });
    expect(s.conditions!.find((c) => c.type === 'Available')!.status).to.equal('True');
    expect(s.conditions!.find((c) => c.type === 'UpgradeBlocked')!.status).to.equal('False');
  });

  it('a healthy cluster is Running while the planner waits (a follower catching up); Degraded only with a member down', () => {
    const steady = computeStatus(input(ms));
    const waiting = computeStatus(input(ms, { previous: steady, step: { kind: 'wait', code: 'CatchingUp', reason: 'member kv-0 is catching up' } }));
    expect(waiting.phase).to.equal('Running');
    expect(waiting.conditions!.find((c) => c.type === 'Progressing')).to.include({ status: 'True', reason: 'CatchingUp' });
    const down = [member('kv-0', '3.4.34', false, false), ms[1], ms[2]];
    expect(computeStatus(input(down, { previous: steady, step: { kind: 'wait', code: 'MemberUnhealthy', reason: 'kv-0 is not healthy' } })).phase).to.equal('Degraded');
  });

  it('the verified completion of an upgrade reads Running (not Degraded) while the step is shown', () => {
    const progress = { from: '3.3.27', to: '3.4.34', step: 'complete' as const, startedAt: 0, finishedAt: 1000, restarts: {}, membersDone: ['kv-0', 'kv-2', 'kv-1'] };
    const s = computeStatus(input(ms, { previous: computeStatus(input(ms)), step: { kind: 'complete', from: '3.3.27', to: '3.4.34' }, progress }));
    expect(s.phase).to.equal('Running');
    expect(s.upgrade!.step).to.equal('complete');
    // the restarted leader's pod is not Ready yet (its probe has not run): still Running, READY says 2/3
    const lagging = input(ms, { previous: s, step: { kind: 'complete', from: '3.3.27', to: '3.4.34' }, progress });
    lagging.pods.set('kv-1', { image: 'svc:v3.4.34', ready: false });
    expect(computeStatus(lagging)).to.include({ phase: 'Running', ready: '2/3' });
    lagging.step = { kind: 'steady', version: '3.4.34' };
    expect(computeStatus(lagging)).to.include({ phase: 'Running', ready: '2/3' });
  });

  it('keeps lastTransitionTime while a condition holds, so the same observation gives the same status', () => {
    const first = computeStatus(input(ms));
    const again = computeStatus(input(ms, { previous: first, now: new Date('2026-01-01T01:00:00Z') }));
    expect(canonical(again)).to.equal(canonical(first));
  });

  it('a refused upgrade is Blocked with the reason; a lost quorum is not Available', () => {
    const b = computeStatus(input(ms, { spec: { version: '3.5.21', replicas: 3 }, step: { kind: 'blocked', code: 'SkipMinor', reason: 'one minor at a time', condition: 'UpgradeBlocked' } }));
    expect(b.phase).to.equal('Blocked');
    expect(b.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'True', reason: 'SkipMinor', message: 'one minor at a time' });
    const down = [member('kv-0', '3.4.34', false, false), member('kv-1', '3.4.34', true, false), member('kv-2', '3.4.34')];
    const d = computeStatus(input(down, { previous: computeStatus(input(ms)), step: { kind: 'wait', code: 'MemberUnhealthy', reason: 'x' } }));
    expect(d.phase).to.equal('Degraded');
    expect(d.conditions!.find((c) => c.type === 'Available')!.status).to.equal('False');
  });

  it('while scaling: phase Scaling, quorum and Degraded counted on the members there are, READY against spec.replicas', () => {
    const running = computeStatus(input(ms));
    const up = computeStatus(input(ms, { spec: { version: '3.4.34', replicas: 5 }, previous: running, step: { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] } }));
    expect(up).to.include({ phase: 'Scaling', ready: '3/5' });
    expect(up.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True', message: '3 of 3 members healthy' });
    expect(up.conditions!.find((c) => c.type === 'Degraded')!.status).to.equal('False');
    const starting = [...ms, { ...member('kv-3', '3.4.34', false, false), release: undefined }];
    const joined = computeStatus(input(starting, { spec: { version: '3.4.34', replicas: 5 }, previous: up, step: { kind: 'wait', code: 'MemberStarting', reason: 'x' } }));
    expect(joined.phase).to.equal('Scaling');
    expect(joined.conditions!.find((c) => c.type === 'Available')).to.include({ status: 'True', message: '3 of 4 members healthy' });
    const done = computeStatus(input([...ms, member('kv-3', '3.4.34'), member('kv-4', '3.4.34')], { spec: { version: '3.4.34', replicas: 5 }, previous: joined }));
    expect(done).to.include({ phase: 'Running', ready: '5/5' });
  });

  const condOf = (s: ReturnType<typeof computeStatus>, type: string) => s.conditions!.find((c) => c.type === type)!;

  it('kstatus conditions: a steady cluster is Ready, not Reconciling, not Stalled, each with observedGeneration', () => {
    const s = computeStatus(input(ms));
    expect(condOf(s, 'Ready')).to.include({ status: 'True', reason: 'Ready', observedGeneration: 2 });
    expect(condOf(s, 'Reconciling')).to.include({ status: 'False', observedGeneration: 2 });
    expect(condOf(s, 'Stalled')).to.include({ status: 'False', observedGeneration: 2 });
    expect(s.conditions!.every((c) => c.observedGeneration === 2)).to.equal(true);
    expect(s.step).to.equal(undefined);
    expect(s.members!.some((m) => 'raftIndex' in m), 'no raft index in the stored status').to.equal(false);
  });

  it('kstatus conditions: an upgrade under way is Reconciling and not Ready; a refusal is Stalled', () => {
    const progress = { from: '3.3.27', to: '3.4.34', step: 'restartMember' as const, startedAt: 0, restarts: {}, membersDone: ['kv-0'] };
    const up = computeStatus(input(ms, { step: { kind: 'restartMember', member: 'kv-2', version: '3.4.34' }, progress }));
    expect(condOf(up, 'Ready').status).to.equal('False');
    expect(condOf(up, 'Reconciling')).to.include({ status: 'True', reason: 'restartMember' });
    expect(condOf(up, 'Stalled').status).to.equal('False');
    expect(up.step).to.equal('restartMember');
    const b = computeStatus(input(ms, { step: { kind: 'blocked', code: 'SkipMinor', reason: 'one minor at a time', condition: 'UpgradeBlocked' } }));
    expect(condOf(b, 'Stalled')).to.include({ status: 'True', reason: 'SkipMinor', message: 'one minor at a time' });
    expect(condOf(b, 'Reconciling').status).to.equal('False');
    expect(condOf(b, 'Ready')).to.include({ status: 'False', reason: 'SkipMinor' });
    expect(b.step).to.equal('SkipMinor');
  });

  it('the raft indexes moving under client writes do not change the status', () => {
    const first = computeStatus(input(ms));
    const busier = ms.map((m) => ({ ...m, appliedIndex: m.appliedIndex! + 5000 }));
    expect(canonical(computeStatus(input(busier, { previous: first, now: new Date('2026-01-01T00:05:00Z') })))).to.equal(canonical(first));
  });

  it('a pod problem is Stalled, shown in STEP and lastError, and keeps Ready False', () => {
    const down = [member('kv-0', '3.4.34', false, false), ms[1], ms[2]];
    const s = computeStatus(input(down, { previous: computeStatus(input(ms)), step: { kind: 'wait', code: 'MemberUnhealthy', reason: 'kv-0' },
      podProblems: [{ reason: 'ImagePullBackOff', object: 'kv-0', message: 'Back-off pulling image "svc:v9"' }] }));
    expect(condOf(s, 'Stalled')).to.include({ status: 'True', reason: 'ImagePullBackOff' });
    expect(condOf(s, 'Ready')).to.include({ status: 'False', reason: 'ImagePullBackOff' });
    expect(s.step).to.equal('ImagePullBackOff');
    expect(s.lastError).to.equal('kv-0: ImagePullBackOff: Back-off pulling image "svc:v9"');
  });

  it('stoppedStatus: a refused spec is Stalled and Blocked; a failed reconcile is Reconciling with the error, phase kept', () => {
    const prev = computeStatus(input(ms));
    const refused = stoppedStatus(prev, 3, 'InvalidSpec', 'spec.replicas must be odd', new Date('2026-01-01T00:01:00Z'));
    expect(refused).to.include({ phase: 'Blocked', lastError: 'spec.replicas must be odd', observedGeneration: 3 });
    expect(condOf(refused, 'Stalled')).to.include({ status: 'True', reason: 'InvalidSpec', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:01:00Z' });
    expect(condOf(refused, 'Available').status).to.equal('True'); // other conditions kept
    const failed = stoppedStatus(prev, 2, 'ReconcileError', 'reconcile failed: boom', new Date('2026-01-01T00:01:00Z'), false);
    expect(failed).to.include({ phase: 'Running', lastError: 'reconcile failed: boom' });
    expect(condOf(failed, 'Reconciling')).to.include({ status: 'True', reason: 'ReconcileError' });
    expect(condOf(failed, 'Stalled').status).to.equal('False');
    expect(condOf(failed, 'Ready').status).to.equal('False');
  });

  it('errorLine: an apiserver refusal as its code and Status message (stable across retries), other errors as their message', () => {
    const refusal = Object.assign(new Error('HTTP-Code: 422 Message: Unknown API Status Code! Body: ... Headers: {"date":"Tue, 24 Nov 2026 04:00:00 GMT"}'), {
      code: 422, body: JSON.stringify({ kind: 'Status', reason: 'Invalid', message: 'StatefulSet.apps "kv" is invalid: spec: Forbidden: updates to statefulset spec for fields other than \'replicas\' are forbidden' }),
    });
    expect(errorLine(refusal)).to.equal('the apiserver answered 422 Invalid: StatefulSet.apps "kv" is invalid: spec: Forbidden: updates to statefulset spec for fields other than \'replicas\' are forbidden');
    expect(errorLine(new Error('boom'))).to.equal('boom');
  });
});
