// The one table of step kinds: everything the operator says or decides about a kind of step, except how to carry
// it out (that is the engine's act, orchestrator/engine.ts, the only switch over kinds). The table's type has a row
// for every member of the Step union, so a new kind does not compile until its row is written here.
import { hexMemberId } from '../api/member-id.js';
import type { Phase } from '../api/types.js';
import type { Capability, Step, StepKind } from './types.js';

/** What the operator knows about one kind of step `S`. */
export interface StepRow<S extends { kind: string }> {
  /** Changes the cluster: recorded first (write-ahead), then carried out. */
  mutating: boolean;
  /** Adds or removes a member (the scaling record; phase Scaling). */
  scaling: boolean;
  /** The cluster is as specified (nothing left to do): Ready may be True, `kubectl wait` may return. */
  settled: boolean;
  /** What the runtime must be able to do to carry it out (none: every runtime can). */
  needs: readonly Capability[];
  /** The phase it shows whatever the members look like (else status.ts derives one from them). */
  phase?: Phase;
  /** Kubernetes carries it out as a Job (a failed Job shows in status until a Job succeeds or none is due). */
  job?: true;
  /** How soon the controller looks again while it is planned and not acted on (else: its poll, or resync once settled). */
  lookAgainMs?: number;
  /** One line for logs, Events and the CLI. */
  describe: (step: S) => string;
  /** Reason of the Event announcing the step. */
  eventReason: (step: S) => string;
  /** Reason of the Progressing and Reconciling conditions, and the STEP printer column. */
  statusReason: (step: S) => string;
  /** Message of those conditions while the step is planned. */
  statusLine: (step: S) => string;
  /** The short record of a step carried out, in `local apply`'s result ("restartMember kv-1 3.4.34"). */
  actionLine: (step: S) => string;
}

/** A row for every kind of the step union `S` (the compiler checks completeness). */
export type StepTable<S extends { kind: string }> = { [K in S['kind']]: StepRow<Extract<S, { kind: K }>> };

const kindOnly = (s: { kind: string }): string => s.kind;
/** The members a new one joins: its initial cluster without itself. */
const others = (initialCluster: string[], member: string): string => initialCluster.filter((n) => n !== member).join(', ');
const withMember = (s: { kind: string; member: string }): string => `${s.kind} ${s.member}`;

export const STEPS = {
  createCluster: {
    mutating: true, scaling: false, settled: false, needs: [], job: true,
    describe: (s) => `create ${s.replicas} member(s) of ${s.version}`,
    eventReason: () => 'CreateCluster', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `createCluster ${s.version} x${s.replicas}`,
  },
  wait: {
    mutating: false, scaling: false, settled: false, needs: [],
    describe: (s) => `wait (${s.code}): ${s.reason}`,
    eventReason: (s) => s.code, statusReason: (s) => s.code, statusLine: (s) => s.reason,
    actionLine: kindOnly,
  },
  blocked: {
    mutating: false, scaling: false, settled: false, needs: [], phase: 'Blocked', lookAgainMs: 15_000,
    describe: (s) => `blocked (${s.code}): ${s.reason}`,
    eventReason: (s) => s.code, statusReason: (s) => s.code, statusLine: (s) => s.reason,
    actionLine: kindOnly,
  },
  snapshot: {
    mutating: true, scaling: false, settled: false, needs: [], job: true,
    describe: (s) => `snapshot from leader ${s.member} before ${s.from} -> ${s.to}`,
    eventReason: () => 'Snapshot', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  backup: {
    // a scheduled or on-demand backup only reads the cluster: it stays Ready, as before backups became steps
    mutating: true, scaling: false, settled: true, needs: ['backups'], job: true,
    describe: (s) => `${s.reason === 'Scheduled' ? `scheduled backup (slot ${s.id})` : `on-demand backup (request ${s.id})`} from leader ${s.member}`,
    eventReason: () => 'Backup', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `backup ${s.reason} ${s.member}`,
  },
  verifyBackup: {
    // a drill restores into a scratch member and touches no member of the cluster: it stays Ready
    mutating: true, scaling: false, settled: true, needs: ['drills'],
    describe: (s) => `restore drill (${s.reason === 'Scheduled' ? `slot ${s.id}` : `request ${s.id}`}) of ${s.backup ? `${s.backup.location}, revision ${s.backup.revision}` : 'the newest backup (none recorded)'}`,
    eventReason: () => 'VerifyBackup', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `verifyBackup ${s.reason}`,
  },
  moveLeader: {
    mutating: true, scaling: false, settled: false, needs: [],
    describe: (s) => `move leadership from ${s.from} to ${s.to}`,
    eventReason: () => 'MoveLeader', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `moveLeader ${s.from} ${s.to}`,
  },
  restartMember: {
    mutating: true, scaling: false, settled: false, needs: [],
    describe: (s) => `restart ${s.member} on ${s.version}${s.reason ? ` (${s.reason})` : ''}`,
    eventReason: () => 'RestartMember', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `restartMember ${s.member} ${s.version}`,
  },
  addMember: {
    mutating: true, scaling: true, settled: false, needs: ['scaling'],
    describe: (s) => `add member ${s.member} (joining ${others(s.join, s.member)})`,
    eventReason: () => 'AddMember', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  startMember: {
    mutating: true, scaling: true, settled: false, needs: ['scaling'],
    describe: (s) => `start member ${s.member}, already added to the cluster (joining ${others(s.join, s.member)})`,
    eventReason: () => 'StartMember', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  removeMember: {
    mutating: true, scaling: true, settled: false, needs: ['scaling'],
    describe: (s) => `remove member ${s.member} (id ${hexMemberId(s.id)})`,
    eventReason: () => 'RemoveMember', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  retireMember: {
    mutating: true, scaling: true, settled: false, needs: ['scaling'],
    describe: (s) => `stop member ${s.member}, no longer in the cluster, and delete its data`,
    eventReason: () => 'RetireMember', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  replaceMember: {
    // a lost member is no scaling: the size stays, one member is swapped for a fresh one
    mutating: true, scaling: false, settled: false, needs: ['scaling', 'healing'],
    describe: (s) => `replace member ${s.member} (id ${hexMemberId(s.id)}; ${s.cause}: ${s.detail}): remove it, a fresh data dir, add it back as a learner joining ${others(s.join, s.member)}`,
    eventReason: () => 'ReplaceMember', statusReason: kindOnly, statusLine: (s) => `replacing ${s.member} (${s.cause}: ${s.detail})`,
    actionLine: (s) => `replaceMember ${s.member} ${s.cause}`,
  },
  promoteMember: {
    mutating: true, scaling: false, settled: false, needs: ['scaling'],
    describe: (s) => `promote learner ${s.member} (id ${hexMemberId(s.id)}) to a voting member${s.replaced ? `; the replacement of ${s.member} (${s.replaced}) is complete` : ''}`,
    eventReason: (s) => (s.replaced ? 'MemberReplaced' : 'PromoteMember'), statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  complete: {
    // not mutating (nothing in the cluster changes), but the engine records it: the upgrade's end
    mutating: false, scaling: false, settled: true, needs: [],
    describe: (s) => `verified: every member reports ${s.to} (etcdserver and etcdcluster); upgrade ${s.from} -> ${s.to} complete`,
    eventReason: () => 'UpgradeComplete', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: kindOnly,
  },
  steady: {
    mutating: false, scaling: false, settled: true, needs: [],
    describe: (s) => `every member runs ${s.version}; nothing to do`,
    eventReason: () => 'Steady', statusReason: () => 'Steady', statusLine: kindOnly,
    actionLine: kindOnly,
  },
  // quorum-loss recovery (planner/recovery.ts), asked for by `local recover` / the svc.dev/recover annotation
  recoverSnapshot: {
    mutating: true, scaling: false, settled: false, needs: ['recovery'], job: true,
    describe: (s) => `recovery ${s.token}: snapshot of the survivor ${s.member} before anything is touched`,
    eventReason: () => 'RecoverSnapshot', statusReason: kindOnly, statusLine: (s) => `snapshot of the survivor ${s.member} (recovery ${s.token})`,
    actionLine: withMember,
  },
  forceNewCluster: {
    mutating: true, scaling: false, settled: false, needs: ['recovery'],
    describe: (s) => `recovery ${s.token}: stop ${s.lost.join(', ') || 'no other member'} and drop their data, restart ${s.member} in place with --force-new-cluster`,
    eventReason: () => 'ForceNewCluster', statusReason: kindOnly, statusLine: (s) => `restarting ${s.member} with --force-new-cluster (recovery ${s.token})`,
    actionLine: withMember,
  },
  endForceNewCluster: {
    mutating: true, scaling: false, settled: false, needs: ['recovery'],
    describe: (s) => `restart ${s.member} without --force-new-cluster before the cluster grows back`,
    eventReason: () => 'EndForceNewCluster', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  recoverComplete: {
    // not mutating (nothing in the cluster changes), but the engine records it: the recovery's end
    mutating: false, scaling: false, settled: true, needs: ['recovery'],
    describe: (s) => `recovery ${s.token} complete: the cluster is back to full size from ${s.member}'s data`,
    eventReason: () => 'Recovered', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: withMember,
  },
  disarmAlarm: {
    mutating: true, scaling: false, settled: false, needs: [],
    describe: (s) => (s.alarm === 'CORRUPT'
      ? `disarm the CORRUPT alarm through ${s.member}: every member's KV hash agrees again`
      : `disarm the NOSPACE alarm of member ${hexMemberId(s.memberId)} through ${s.member}: ${s.relief ?? 'the database fits in the quota again'}`),
    eventReason: () => 'AlarmDisarmed', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `disarmAlarm ${s.alarm}`,
  },
  // break-glass hibernation (spec.replicas 0): every member stopped, its data kept; a replica count wakes the same data
  hibernate: {
    mutating: true, scaling: false, settled: false, needs: ['hibernation'], phase: 'Hibernated',
    describe: (s) => `hibernate: stop ${s.members.join(', ')}, keeping their data (spec.replicas is 0)`,
    eventReason: () => 'Hibernate', statusReason: kindOnly, statusLine: (s) => `stopping ${s.members.join(', ')} (spec.replicas 0)`,
    actionLine: (s) => `hibernate ${s.members.join(',')}`,
  },
  hibernated: {
    mutating: false, scaling: false, settled: true, needs: [], phase: 'Hibernated',
    describe: (s) => `hibernated: ${s.members} member(s) stopped with their data kept; set spec.replicas to wake them`,
    eventReason: () => 'Hibernated', statusReason: () => 'Hibernated', statusLine: (s) => `hibernated: ${s.members} member(s) stopped, data kept`,
    actionLine: kindOnly,
  },
  wake: {
    mutating: true, scaling: false, settled: false, needs: ['hibernation'],
    describe: (s) => `wake: start ${s.members.join(', ')} on their kept data`,
    eventReason: () => 'Wake', statusReason: kindOnly, statusLine: (s) => `starting ${s.members.join(', ')} on their kept data`,
    actionLine: (s) => `wake ${s.members.join(',')}`,
  },
  // maintenance (planner/maintenance.ts): recorded in the maintenance record before each part
  compact: {
    mutating: true, scaling: false, settled: false, needs: [],
    describe: (s) => `compact the history up to revision ${s.revision} through ${s.member} (${s.reason} maintenance ${s.id})`,
    eventReason: () => 'Compact', statusReason: kindOnly, statusLine: (s) => `compacting up to revision ${s.revision} (${s.reason})`,
    actionLine: (s) => `compact ${s.revision}`,
  },
  defragMember: {
    mutating: true, scaling: false, settled: false, needs: [],
    describe: (s) => `defragment ${s.member} (${s.reason} maintenance ${s.id})`,
    // the Event of a defragmentation done carries its bytes (MemberDefragmented, from the engine's result)
    eventReason: () => 'Defragment', statusReason: kindOnly, statusLine: (s) => `defragmenting ${s.member} (${s.reason})`,
    actionLine: withMember,
  },
  expandVolumes: {
    mutating: true, scaling: false, settled: false, needs: ['volumes'],
    describe: (s) => `grow the members' volumes from ${s.from} to ${s.size}: ${s.members.length > 0 ? `claims of ${s.members.join(', ')} expanded in place, then ` : ''}the StatefulSet recreated with its pods orphaned (no member restarts)`,
    eventReason: () => 'ExpandVolumes', statusReason: kindOnly, statusLine: (s) => `growing the volumes to ${s.size}`,
    actionLine: (s) => `expandVolumes ${s.size}`,
  },
  startBackupAgent: {
    // the agent streams the leader's changes and takes its own full snapshots: it touches no member, the cluster stays Ready
    mutating: true, scaling: false, settled: true, needs: ['continuous'],
    describe: (s) => `${s.reason === 'NotRunning' ? 'start' : 'restart'} the backup agent of spec.backup.continuous (${s.reason === 'NotRunning' ? 'not running' : 'its configuration changed'})`,
    eventReason: () => 'BackupAgent', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: (s) => `startBackupAgent ${s.reason}`,
  },
  stopBackupAgent: {
    mutating: true, scaling: false, settled: true, needs: ['continuous'],
    describe: () => 'stop the backup agent: spec.backup.continuous is off',
    eventReason: () => 'BackupAgent', statusReason: kindOnly, statusLine: kindOnly,
    actionLine: kindOnly,
  },
} satisfies StepTable<Step>;

/** Every step kind, in the table's order (the step gauge's label values). */
export const STEP_KINDS = Object.keys(STEPS) as StepKind[];

/** The kinds whose row says `scaling: true` (read off the table's type, so the list is not written twice). */
export type ScalingKind = { [K in StepKind]: (typeof STEPS)[K]['scaling'] extends true ? K : never }[StepKind];
export type ScalingStep = Extract<Step, { kind: ScalingKind }>;

/** The row of a step's kind, typed for that step. */
function row<S extends Step>(step: S): StepRow<S> {
  // STEPS[step.kind] is the row of exactly S's kind; TypeScript cannot follow a union's kind to its row
  return (STEPS as StepTable<Step>)[step.kind] as unknown as StepRow<S>;
}

/** True for the steps that change the cluster (and therefore are recorded first). */
export function isMutating(step: Step): boolean {
  return STEPS[step.kind].mutating;
}

/** True for the member add/remove steps. */
export function isScalingStep(step: Step): step is ScalingStep {
  return STEPS[step.kind].scaling;
}

/** The capabilities `step` needs that `have` lacks (undefined `have`: none lacks). */
export function lacking(step: Step, have: readonly Capability[] | undefined): Capability[] {
  return have ? STEPS[step.kind].needs.filter((c) => !have.includes(c)) : [];
}

/** True when the cluster is as specified. */
export function isSettled(step: Step): boolean {
  return STEPS[step.kind].settled;
}

/** The phase the step's row sets, if any. */
export const stepPhase = (step: Step): Phase | undefined => (STEPS as StepTable<Step>)[step.kind].phase;
/** True for the steps Kubernetes carries out as a Job. */
export const runsJob = (step: Step): boolean => (STEPS as StepTable<Step>)[step.kind].job === true;
/** How soon to look again at a step planned and not acted on, if its row says. */
export const lookAgainMs = (step: Step): number | undefined => (STEPS as StepTable<Step>)[step.kind].lookAgainMs;

export const describeStep = (step: Step): string => row(step).describe(step);
export const eventReason = (step: Step): string => row(step).eventReason(step);
export const statusReason = (step: Step): string => row(step).statusReason(step);
export const statusLine = (step: Step): string => row(step).statusLine(step);
export const actionLine = (step: Step): string => row(step).actionLine(step);
