// SvcCluster status from an observation: phase, conditions, printer-column fields, and stability (an equal
// observation gives an equal status, so an unchanged cluster is not written).
import { expect } from 'chai';
import { canonical, computeStatus, continuousBackupCondition, continuousBackupEvent, destinationProblem, errorLine, stoppedStatus, type StatusInput } from '../../../operator/controller/status.js';
import { DestinationError } from '../../../operator/backup/destinations/index.js';
import { writesRefused } from '../../../operator/planner/oncall.js';
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
  describe('writes refused by a raised alarm (WritesRefused)', () => {
    // member IDs as the observation keeps them (decimal), shown in hex as etcdctl prints them
    const ids = ['3223160997091794490', '12345678901234567890', '42'];
    const alarmed = ms.map((m, i) => ({ ...m, id: ids[i] }));
    const hex = ids.map((id) => BigInt(id).toString(16));

    it('no alarm: none, and the condition says writes are accepted', () => {
      expect(writesRefused({ now: 0, members: alarmed }, 'kv')).to.equal(undefined);
      expect(computeStatus(input(alarmed, { name: 'kv' })).conditions!.find((c) => c.type === 'WritesRefused')).to.include({ status: 'False', reason: 'NoAlarm', message: 'no alarm is raised: writes are accepted' });
    });

    it('NOSPACE: reason NoSpaceAlarm, every member it is raised for by hex ID and name, the error writes get and the way out', () => {
      const o = { now: 0, members: alarmed, alarms: [{ memberId: ids[1], alarm: 'NOSPACE' }, { memberId: ids[0], alarm: 'NOSPACE' }], noSpace: [ids[0], ids[1]] };
      const w = writesRefused(o, 'kv')!;
      expect(w).to.deep.equal({
        reason: 'NoSpaceAlarm',
        message: `writes are refused, reads go on: the NOSPACE alarm is raised for member ${hex[1]} (kv-1), member ${hex[0]} (kv-0): the database reached its quota, and every write fails with "database space exceeded"; ` +
          'the operator relieves it (compaction, every member defragmented, then the alarm disarmed; locally: `svc-operator local apply`); if the data does not fit even then, raise spec.maintenance.quotaBackendBytes or delete keys',
      });
      const st = computeStatus(input(alarmed, { name: 'kv', observed: o }));
      expect(st.conditions!.find((c) => c.type === 'WritesRefused')).to.include({ status: 'True', reason: 'NoSpaceAlarm', message: w.message });
    });

    it('CORRUPT (also with NOSPACE): reason CorruptAlarm, member 0 as the cluster, both named', () => {
      const o = { now: 0, members: alarmed, alarms: [{ memberId: '0', alarm: 'CORRUPT' }, { memberId: ids[2], alarm: 'NOSPACE' }] };
      const w = writesRefused(o, 'kv')!;
      expect(w.reason).to.equal('CorruptAlarm');
      expect(w.message).to.equal('writes are refused, reads go on: the CORRUPT alarm is raised for the cluster (member 0): the members\' data may differ, and every write fails with "corrupt cluster"; ' +
        'the operator compares the members\' KV hashes, replaces a member that differs from a strict majority, then disarms it (locally: `svc-operator local apply`); ' +
        'with no majority a person decides (`svc-operator local alarm list kv`, `kubectl svc alarm list kv`); ' +
        `the NOSPACE alarm is raised for member 2a (kv-2): the database reached its quota, and every write fails with "database space exceeded"; ` +
        'the operator relieves it (compaction, every member defragmented, then the alarm disarmed; locally: `svc-operator local apply`); if the data does not fit even then, raise spec.maintenance.quotaBackendBytes or delete keys');
    });
  });

  describe('continuous backup\'s destinations (ContinuousBackup, a Warning Event)', () => {
    const refused = destinationProblem(new DestinationError('"offsite" (s3://b/p at http://127.0.0.1:9000)', 'CredentialsRefused', 'the credentials were refused (SignatureDoesNotMatch: no); check the access key and secret in credentialsSecret'));
    const down = destinationProblem(new DestinationError('"second" (s3://b2 at http://127.0.0.1:9)', 'Unreachable', 'the endpoint cannot be reached (ECONNREFUSED: x); check spec.backup.destinations[].s3.endpoint and that the store is up'));

    it('every destination writable: True; one or more failing: False with the first one\'s Destination<Cause>, each named with its cause and the way out', () => {
      expect(continuousBackupCondition([])).to.deep.equal({ type: 'ContinuousBackup', status: 'True', reason: 'DestinationsWritable', message: 'every destination takes the backup agent\'s segments' });
      expect(continuousBackupCondition([refused, down])).to.deep.equal({
        type: 'ContinuousBackup', status: 'False', reason: 'DestinationCredentialsRefused',
        message: 'the backup agent cannot write its segments: destination "offsite" (s3://b/p at http://127.0.0.1:9000): the credentials were refused (SignatureDoesNotMatch: no); check the access key and secret in credentialsSecret; ' +
          'destination "second" (s3://b2 at http://127.0.0.1:9): the endpoint cannot be reached (ECONNREFUSED: x); check spec.backup.destinations[].s3.endpoint and that the store is up; ' +
          'it keeps trying and goes on by itself once the destination is fixed (spec.backup.destinations, the credentialsSecret\'s keys)',
      });
    });

    it('the condition only with continuous backup read; a Warning Event once for each new failure, none while it holds or once mended', () => {
      expect(computeStatus(input(ms)).conditions!.some((c) => c.type === 'ContinuousBackup')).to.equal(false);
      const ok = computeStatus(input(ms, { agentDestinations: [] }));
      const failing = computeStatus(input(ms, { previous: ok, agentDestinations: [refused] }));
      expect(failing.conditions!.find((c) => c.type === 'ContinuousBackup')).to.include({ status: 'False', reason: 'DestinationCredentialsRefused' });
      const event = continuousBackupEvent(ok, failing);
      expect(event).to.deep.equal({ type: 'Warning', reason: 'DestinationCredentialsRefused', message: continuousBackupCondition([refused]).message });
      expect(continuousBackupEvent(undefined, failing)).to.deep.equal(event);
      // the same failure again: told already
      expect(continuousBackupEvent(failing, computeStatus(input(ms, { previous: failing, agentDestinations: [refused] })))).to.equal(undefined);
      // another cause: told again
      expect(continuousBackupEvent(failing, computeStatus(input(ms, { previous: failing, agentDestinations: [down] })))).to.include({ reason: 'DestinationUnreachable' });
      expect(continuousBackupEvent(failing, computeStatus(input(ms, { previous: failing, agentDestinations: [] })))).to.equal(undefined);
    });
  });
});
