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
  moveLeader: { kind: 'moveLeader', from: 'kv-0', to: 'kv-1' },
  restartMember: { kind: 'restartMember', member: 'kv-2', version: '3.4.34', reason: 'SpecChange' },
  addMember: { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] },
  startMember: { kind: 'startMember', member: 'kv-3', join: ['kv-0', 'kv-3'] },
  removeMember: { kind: 'removeMember', member: 'kv-3', id: '42' },
  retireMember: { kind: 'retireMember', member: 'kv-3' },
  complete: { kind: 'complete', from: '3.3.27', to: '3.4.34' },
  steady: { kind: 'steady', version: '3.4.34' },
};
const ALL = Object.values(SAMPLES) as Step[];
const kindsWhere = (f: (s: Step) => boolean): string[] => ALL.filter(f).map((s) => s.kind).sort();

describe('operator: the step table', () => {
  it('has a row for every kind and nothing else; the step gauge enumerates the same kinds', () => {
    expect(Object.keys(STEPS).sort()).to.deep.equal(Object.keys(SAMPLES).sort());
    expect([...STEP_KINDS].sort()).to.deep.equal(Object.keys(SAMPLES).sort());
    expect(STEP_KINDS).to.have.length(12);
  });

  it('mutating, scaling and settled kinds are those the engine and status always treated so', () => {
    expect(kindsWhere(isMutating)).to.deep.equal(['addMember', 'createCluster', 'moveLeader', 'removeMember', 'restartMember', 'retireMember', 'snapshot', 'startMember']);
    expect(kindsWhere(isScalingStep)).to.deep.equal(['addMember', 'removeMember', 'retireMember', 'startMember']);
    expect(kindsWhere(isSettled)).to.deep.equal(['complete', 'steady']);
  });

  it('each kind keeps its description, Event reason, condition reason and line, and action line', () => {
    const rows = Object.fromEntries(ALL.map((s) => [s.kind, [describeStep(s), eventReason(s), statusReason(s), statusLine(s), actionLine(s)]]));
    expect(rows).to.deep.equal({
      createCluster: ['create 3 member(s) of 3.4.34', 'CreateCluster', 'createCluster', 'createCluster', 'createCluster 3.4.34 x3'],
      wait: ['wait (CatchingUp): kv-2 is 300 entries behind', 'CatchingUp', 'CatchingUp', 'kv-2 is 300 entries behind', 'wait'],
      blocked: ['blocked (SkipMinor): one minor release at a time', 'SkipMinor', 'SkipMinor', 'one minor release at a time', 'blocked'],
      snapshot: ['snapshot from leader kv-0 before 3.3.27 -> 3.4.34', 'Snapshot', 'snapshot', 'snapshot', 'snapshot kv-0'],
      moveLeader: ['move leadership from kv-0 to kv-1', 'MoveLeader', 'moveLeader', 'moveLeader', 'moveLeader kv-0 kv-1'],
      restartMember: ['restart kv-2 on 3.4.34 (SpecChange)', 'RestartMember', 'restartMember', 'restartMember', 'restartMember kv-2 3.4.34'],
      addMember: ['add member kv-3 (joining kv-0, kv-1, kv-2, kv-3)', 'AddMember', 'addMember', 'addMember', 'addMember kv-3'],
      startMember: ['start member kv-3, already added to the cluster (joining kv-0, kv-3)', 'StartMember', 'startMember', 'startMember', 'startMember kv-3'],
      removeMember: ['remove member kv-3 (id 42)', 'RemoveMember', 'removeMember', 'removeMember', 'removeMember kv-3'],
      retireMember: ['stop member kv-3, no longer in the cluster, and delete its data', 'RetireMember', 'retireMember', 'retireMember', 'retireMember kv-3'],
      complete: ['verified: every member reports 3.4.34 (etcdserver and etcdcluster); upgrade 3.3.27 -> 3.4.34 complete', 'UpgradeComplete', 'complete', 'complete', 'complete'],
      steady: ['every member runs 3.4.34; nothing to do', 'Steady', 'Steady', 'steady', 'steady'],
    });
    // a restart without a reason says none
    expect(describeStep({ kind: 'restartMember', member: 'kv-0', version: '3.5.21' })).to.equal('restart kv-0 on 3.5.21');
  });
});
