// The table of step kinds (operator/planner/steps.ts): one row per kind, and what each row says, as the operator
// said it before the table (Events, status, the step log and `local apply`'s actions keep their words).
import { expect } from 'chai';
import { actionLine, describeStep, eventReason, isMutating, isScalingStep, isSettled, STEP_KINDS, STEPS, statusLine, statusReason } from '../../../operator/planner/steps.js';
import type { Step, StepKind } from '../../../operator/planner/types.js';

/** One step of every kind (the mapped type makes this list complete too). */
const SAMPLES: { [K in StepKind]: Extract<Step, { kind: K }> } = {
  createCluster: { kind: 'createCluster', version: '3.4.34', replicas: 3 },
  wait: { kind: 'wait', code: 'CatchingUp', reason: 'kv-2 is 300 entries behind' },
  blocked: { kind: 'blocked', code: 'SkipMinor', reason: 'one minor release at a time', condition: 'UpgradeBlocked' },
  snapshot: { kind: 'snapshot', member: 'kv-0', from: '3.3.27', to: '3.4.34' },
  backup: { kind: 'backup', reason: 'OnDemand', member: 'kv-0', id: 'tok-1' },
  verifyBackup: { kind: 'verifyBackup', reason: 'Scheduled', id: '2026-11-27T03:30:00.000Z', backup: { kind: 'scheduled', location: 'pvc://kv-backups/kv/kv-0.db', member: 'kv-0', revision: 42, size: 100, sha256: 'ab', time: '2026-11-27T03:00:00.000Z', kvHash: 7 } },
  moveLeader: { kind: 'moveLeader', from: 'kv-0', to: 'kv-1' },
  restartMember: { kind: 'restartMember', member: 'kv-2', version: '3.4.34', reason: 'SpecChange' },
  addMember: { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] },
  startMember: { kind: 'startMember', member: 'kv-3', join: ['kv-0', 'kv-3'] },
  removeMember: { kind: 'removeMember', member: 'kv-3', id: '42' },
  retireMember: { kind: 'retireMember', member: 'kv-3' },
  complete: { kind: 'complete', from: '3.3.27', to: '3.4.34' },
  steady: { kind: 'steady', version: '3.4.34' },
  replaceMember: { kind: 'replaceMember', member: 'kv-1', id: '7', cause: 'DataLost', detail: 'its data dir is missing', join: ['kv-0', 'kv-1', 'kv-2'] },
  promoteMember: { kind: 'promoteMember', member: 'kv-1', id: '9', replaced: 'DataLost' },
  recoverSnapshot: { kind: 'recoverSnapshot', member: 'kv-1', token: 't1' },
  forceNewCluster: { kind: 'forceNewCluster', member: 'kv-1', lost: ['kv-0', 'kv-2'], token: 't1' },
  endForceNewCluster: { kind: 'endForceNewCluster', member: 'kv-1', version: '3.5.21' },
  recoverComplete: { kind: 'recoverComplete', member: 'kv-1', token: 't1' },
  disarmAlarm: { kind: 'disarmAlarm', member: 'kv-0', alarm: 'CORRUPT', memberId: '0' },
  hibernate: { kind: 'hibernate', members: ['kv-0', 'kv-1'] },
  hibernated: { kind: 'hibernated', members: 3 },
  wake: { kind: 'wake', members: ['kv-0', 'kv-1', 'kv-2'] },
  compact: { kind: 'compact', member: 'kv-0', revision: 120, reason: 'NoSpace', id: 'nospace-1' },
  defragMember: { kind: 'defragMember', member: 'kv-1', reason: 'Scheduled', id: '2026-01-01T03:00:00.000Z' },
  expandVolumes: { kind: 'expandVolumes', size: '2Gi', from: '1Gi', members: ['kv-0', 'kv-1'] },
  startBackupAgent: { kind: 'startBackupAgent', reason: 'ConfigChanged' },
  stopBackupAgent: { kind: 'stopBackupAgent' },
};
/** The kinds of quorum-loss recovery (their own test below). */
const RECOVERY_KINDS: readonly string[] = ['recoverSnapshot', 'forceNewCluster', 'endForceNewCluster', 'recoverComplete'];
/** The break-glass kinds of hibernation (their own test below). */
const HIBERNATION_KINDS: readonly string[] = ['hibernate', 'hibernated', 'wake'];
/** The kinds of maintenance (their own test below). */
const MAINTENANCE_KINDS: readonly string[] = ['compact', 'defragMember', 'expandVolumes'];
/** Continuous backup's agent (its own test below). */
const AGENT_KINDS: readonly string[] = ['startBackupAgent', 'stopBackupAgent'];
const ALL = (Object.values(SAMPLES) as Step[]).filter((s) => ![...RECOVERY_KINDS, ...HIBERNATION_KINDS, ...MAINTENANCE_KINDS, ...AGENT_KINDS].includes(s.kind));
const AGENT = (Object.values(SAMPLES) as Step[]).filter((s) => AGENT_KINDS.includes(s.kind));
const HIBERNATION = (Object.values(SAMPLES) as Step[]).filter((s) => HIBERNATION_KINDS.includes(s.kind));
const MAINTENANCE = (Object.values(SAMPLES) as Step[]).filter((s) => MAINTENANCE_KINDS.includes(s.kind));
const RECOVERY = (Object.values(SAMPLES) as Step[]).filter((s) => RECOVERY_KINDS.includes(s.kind));
const kindsWhere = (f: (s: Step) => boolean): string[] => ALL.filter(f).map((s) => s.kind).sort();

describe('operator: the step table', () => {
  it('has a row for every kind and nothing else; the step gauge enumerates the same kinds', () => {
    expect(Object.keys(STEPS).sort()).to.deep.equal(Object.keys(SAMPLES).sort());
    expect([...STEP_KINDS].sort()).to.deep.equal(Object.keys(SAMPLES).sort());
    expect(STEP_KINDS).to.have.length(17 + RECOVERY_KINDS.length + HIBERNATION_KINDS.length + MAINTENANCE_KINDS.length + AGENT_KINDS.length);
  });

  it('the backup agent kinds: recorded first, settled (the members are untouched), they need the runtime\'s agent', () => {
    expect(AGENT.filter(isMutating).map((s) => s.kind)).to.deep.equal(['startBackupAgent', 'stopBackupAgent']);
    expect(AGENT.filter(isSettled).map((s) => s.kind)).to.deep.equal(['startBackupAgent', 'stopBackupAgent']);
    expect(AGENT.map(eventReason).join(' | ')).to.equal('BackupAgent | BackupAgent');
    expect(AGENT.map(describeStep).join('\n')).to.equal(`restart the backup agent of spec.backup.continuous (its configuration changed)
stop the backup agent: spec.backup.continuous is off`);
    expect(AGENT.map((s) => STEPS[s.kind].needs)).to.deep.equal([['continuous'], ['continuous']]);
  });

  it('the maintenance kinds: recorded first, not settled, their words; a NOSPACE disarm names the member', () => {
    expect(MAINTENANCE.filter(isMutating).map((s) => s.kind)).to.deep.equal(['compact', 'defragMember', 'expandVolumes']);
    expect(MAINTENANCE.filter(isSettled)).to.deep.equal([]);
    expect(MAINTENANCE.map(eventReason).join(' | ')).to.equal('Compact | Defragment | ExpandVolumes');
    expect(MAINTENANCE.map(statusLine).join(' | ')).to.equal('compacting up to revision 120 (NoSpace) | defragmenting kv-1 (Scheduled) | growing the volumes to 2Gi');
    expect(MAINTENANCE.map(actionLine).join(' | ')).to.equal('compact 120 | defragMember kv-1 | expandVolumes 2Gi');
    expect(MAINTENANCE.map(describeStep).join('\n')).to.equal(`compact the history up to revision 120 through kv-0 (NoSpace maintenance nospace-1)
defragment kv-1 (Scheduled maintenance 2026-01-01T03:00:00.000Z)
grow the members' volumes from 1Gi to 2Gi: claims of kv-0, kv-1 expanded in place, then the StatefulSet recreated with its pods orphaned (no member restarts)`);
    expect(describeStep({ kind: 'disarmAlarm', member: 'kv-0', alarm: 'NOSPACE', memberId: '42' })).to.equal('disarm the NOSPACE alarm of member 2a through kv-0: the database fits in the quota again');
  });

  it('mutating, scaling and settled kinds are those the engine and status always treated so', () => {
    expect(kindsWhere(isMutating)).to.deep.equal(['addMember', 'backup', 'createCluster', 'disarmAlarm', 'moveLeader', 'promoteMember', 'removeMember', 'replaceMember', 'restartMember', 'retireMember', 'snapshot', 'startMember', 'verifyBackup']);
    expect(kindsWhere(isScalingStep)).to.deep.equal(['addMember', 'removeMember', 'retireMember', 'startMember']);
    expect(kindsWhere(isSettled)).to.deep.equal(['backup', 'complete', 'steady', 'verifyBackup']);
  });

  it('the recovery kinds: recorded first but recoverComplete (the engine records it), none scaling, only recoverComplete settled', () => {
    expect(RECOVERY.filter(isMutating).map((s) => s.kind)).to.deep.equal(['recoverSnapshot', 'forceNewCluster', 'endForceNewCluster']);
    expect(RECOVERY.filter(isScalingStep)).to.deep.equal([]);
    expect(RECOVERY.filter(isSettled).map((s) => s.kind)).to.deep.equal(['recoverComplete']);
    expect(RECOVERY.map(eventReason).join(' | ')).to.equal('RecoverSnapshot | ForceNewCluster | EndForceNewCluster | Recovered');
    expect(RECOVERY.map(actionLine).join(' | ')).to.equal('recoverSnapshot kv-1 | forceNewCluster kv-1 | endForceNewCluster kv-1 | recoverComplete kv-1');
    expect(RECOVERY.map(describeStep).join('\n')).to.equal(`recovery t1: snapshot of the survivor kv-1 before anything is touched
recovery t1: stop kv-0, kv-2 and drop their data, restart kv-1 in place with --force-new-cluster
restart kv-1 without --force-new-cluster before the cluster grows back
recovery t1 complete: the cluster is back to full size from kv-1's data`);
  });

  it('hibernation: hibernate and wake recorded first, hibernated settled (Ready: as the spec asks), none scaling', () => {
    expect(HIBERNATION.filter(isMutating).map((s) => s.kind)).to.deep.equal(['hibernate', 'wake']);
    expect(HIBERNATION.filter(isScalingStep)).to.deep.equal([]);
    expect(HIBERNATION.filter(isSettled).map((s) => s.kind)).to.deep.equal(['hibernated']);
    expect(HIBERNATION.map(eventReason).join(' | ')).to.equal('Hibernate | Hibernated | Wake');
    expect(HIBERNATION.map(statusReason).join(' | ')).to.equal('hibernate | Hibernated | wake');
    expect(HIBERNATION.map(actionLine).join(' | ')).to.equal('hibernate kv-0,kv-1 | hibernated | wake kv-0,kv-1,kv-2');
    expect(describeStep(SAMPLES.hibernated)).to.equal('hibernated: 3 member(s) stopped with their data kept; set spec.replicas to wake them');
  });

  it('each kind keeps its description, Event reason, condition reason and line, and action line', () => {
    const column = (f: (s: Step) => string): string => ALL.map(f).join(' | ');
    expect(ALL.map((s) => s.kind).join(' | ')).to.equal('createCluster | wait | blocked | snapshot | backup | verifyBackup | moveLeader | restartMember | addMember | startMember | removeMember | retireMember | complete | steady | replaceMember | promoteMember | disarmAlarm');
    expect(column(eventReason)).to.equal('CreateCluster | CatchingUp | SkipMinor | Snapshot | Backup | VerifyBackup | MoveLeader | RestartMember | AddMember | StartMember | RemoveMember | RetireMember | UpgradeComplete | Steady | ReplaceMember | MemberReplaced | AlarmDisarmed');
    expect(column(statusReason)).to.equal('createCluster | CatchingUp | SkipMinor | snapshot | backup | verifyBackup | moveLeader | restartMember | addMember | startMember | removeMember | retireMember | complete | Steady | replaceMember | promoteMember | disarmAlarm');
    expect(column(statusLine)).to.equal('createCluster | kv-2 is 300 entries behind | one minor release at a time | snapshot | backup | verifyBackup | moveLeader | restartMember | addMember | startMember | removeMember | retireMember | complete | steady | replacing kv-1 (DataLost: its data dir is missing) | promoteMember | disarmAlarm');
    expect(column(actionLine)).to.equal('createCluster 3.4.34 x3 | wait | blocked | snapshot kv-0 | backup OnDemand kv-0 | verifyBackup Scheduled | moveLeader kv-0 kv-1 | restartMember kv-2 3.4.34 | addMember kv-3 | startMember kv-3 | removeMember kv-3 | retireMember kv-3 | complete | steady | replaceMember kv-1 DataLost | promoteMember kv-1 | disarmAlarm CORRUPT');
    expect(ALL.map(describeStep).join('\n')).to.equal(`create 3 member(s) of 3.4.34
wait (CatchingUp): kv-2 is 300 entries behind
blocked (SkipMinor): one minor release at a time
snapshot from leader kv-0 before 3.3.27 -> 3.4.34
on-demand backup (request tok-1) from leader kv-0
restore drill (slot 2026-11-27T03:30:00.000Z) of pvc://kv-backups/kv/kv-0.db, revision 42
move leadership from kv-0 to kv-1
restart kv-2 on 3.4.34 (SpecChange)
add member kv-3 (joining kv-0, kv-1, kv-2)
start member kv-3, already added to the cluster (joining kv-0)
remove member kv-3 (id 2a)
stop member kv-3, no longer in the cluster, and delete its data
verified: every member reports 3.4.34 (etcdserver and etcdcluster); upgrade 3.3.27 -> 3.4.34 complete
every member runs 3.4.34; nothing to do
replace member kv-1 (id 7; DataLost: its data dir is missing): remove it, a fresh data dir, add it back as a learner joining kv-0, kv-2
promote learner kv-1 (id 9) to a voting member; the replacement of kv-1 (DataLost) is complete
disarm the CORRUPT alarm through kv-0: every member's KV hash agrees again`);
    // a scale-up's learner is promoted with its own Event reason
    expect(eventReason({ kind: 'promoteMember', member: 'kv-3', id: '10' })).to.equal('PromoteMember');
    // a restart without a reason says none
    expect(describeStep({ kind: 'restartMember', member: 'kv-0', version: '3.5.21' })).to.equal('restart kv-0 on 3.5.21');
  });
});
