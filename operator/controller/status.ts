// SvcCluster status from one observation, the planned step and the recorded progress: pure. Conditions keep
// their lastTransitionTime while their status stays the same, so an unchanged cluster gives an equal status.
import type { BackupsStatus, Condition, ConditionType, MaintenanceStatus, MemberStatus, Phase, RolloutStatus, SvcClusterSpec, SvcClusterStatus } from '../api/types.js';
import { memberQuota } from '../planner/maintenance.js';
import { hexMemberId } from '../api/member-id.js';
import { backupReadyState } from '../backup/schedule.js';
import { backupVerifiedState } from '../backup/verify.js';
import { observedClusterVersion } from '../planner/plan.js';
import { upgradeStatus } from '../planner/status.js';
import { quorumLoss } from '../planner/healing.js';
import { writesRefused } from '../planner/oncall.js';
import { isScalingStep, isSettled, statusLine, statusReason, stepPhase } from '../planner/steps.js';
import type { MaintenanceRecord, ObservedCluster, RolloutProgress, Step, UpgradeProgress } from '../planner/types.js';
import { compareVersions } from '../api/versions.js';
import type { DestinationError } from '../backup/destinations/index.js';

/** Pod facts status shows next to what members answer. */
export interface PodFacts {
  image?: string;
  ready: boolean;
}

export interface StatusInput {
  generation?: number;
  /** The SvcCluster's name (the commands a message gives name it). */
  name?: string;
  spec: SvcClusterSpec;
  observed: ObservedCluster;
  pods: Map<string, PodFacts>;
  step: Step;
  progress?: UpgradeProgress;
  previous?: SvcClusterStatus;
  /** Error of the last reconcile, if any. */
  error?: string;
  now: Date;
  /** The last backup/restore Job failure, until a Job succeeds (BackupReady False; a backup's blocks the upgrade). */
  jobFailure?: { reason: string; message: string };
  /** The rollout of a configuration or certificate change, as recorded. */
  rollout?: RolloutProgress;
  /** Pod-level failures (pod-diagnostics.ts): image pulls, scheduling, refused pods, claims, crashes. */
  podProblems?: PodProblem[];
  /** status.backups: the claim and the backups kept (BackupReady says where the newest is). */
  backups?: BackupsStatus;
  /** spec.backup.continuous: the agent's destinations that do not take its segments (ContinuousBackup); none: all do. */
  agentDestinations?: DestinationProblem[];
}

/** A destination that refuses or cannot be reached: `Destination<Cause>` and its message (the destination, the cause, the way out). */
export interface DestinationProblem {
  reason: string;
  message: string;
}

/** The problem of a DestinationError (its cause as the backup Jobs' JobFailure reason names it). */
export function destinationProblem(e: DestinationError): DestinationProblem {
  return { reason: `Destination${e.reason}`, message: e.message };
}

/**
 * Condition ContinuousBackup (spec.backup.continuous): True while every destination takes the agent's segments; else
 * False with the first failing destination's reason, naming each that fails with its cause.
 */
export function continuousBackupCondition(problems: readonly DestinationProblem[]): Omit<Condition, 'lastTransitionTime'> {
  if (problems.length === 0) return cond('ContinuousBackup', true, 'DestinationsWritable', 'every destination takes the backup agent\'s segments');
  return cond('ContinuousBackup', false, problems[0].reason, `the backup agent cannot write its segments: ${problems.map((p) => p.message).join('; ')}; ` +
    'it keeps trying and goes on by itself once the destination is fixed (spec.backup.destinations, the credentialsSecret\'s keys)');
}

/** The Warning Event of a continuous-backup failure: once for each new message (the stored status says what was told). */
export function continuousBackupEvent(previous: SvcClusterStatus | undefined, next: SvcClusterStatus): { type: 'Warning'; reason: string; message: string } | undefined {
  const c = next.conditions?.find((x) => x.type === 'ContinuousBackup');
  if (c?.status !== 'False') return undefined;
  const p = previous?.conditions?.find((x) => x.type === 'ContinuousBackup');
  if (p?.status === 'False' && p.message === c.message) return undefined;
  return { type: 'Warning', reason: c.reason, message: c.message };
}

/** A failure Kubernetes reports about a member's pod or claim, which the members themselves cannot tell. */
export interface PodProblem {
  /** Typed reason: ImagePullBackOff, ErrImagePull, Unschedulable, FailedCreate, ClaimPending, OOMKilled, CrashLoopBackOff. */
  reason: string;
  /** The pod (or the StatefulSet, for FailedCreate) it is about. */
  object: string;
  message: string;
}

type Draft = Omit<Condition, 'lastTransitionTime'>;

function cond(type: ConditionType, ok: boolean, reason: string, message: string): Draft {
  return { type, status: ok ? 'True' : 'False', reason, message };
}

/** Conditions with observedGeneration, keeping each one's lastTransitionTime while its status holds. */
function stamp(drafts: Draft[], previous: SvcClusterStatus | undefined, generation: number | undefined, now: Date): Condition[] {
  return drafts.map((d) => {
    const prev = previous?.conditions?.find((c) => c.type === d.type);
    const c: Condition = { ...d, lastTransitionTime: prev && prev.status === d.status ? prev.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
    if (generation !== undefined) c.observedGeneration = generation;
    return c;
  });
}

/** One line of pod problems (status.lastError, the Stalled message). */
export function podProblemsLine(problems: readonly PodProblem[]): string {
  return problems.map((p) => `${p.object}: ${p.reason}: ${p.message}`).join('; ');
}

/**
 * The status of a cluster the operator cannot act on before looking at its members (a spec it refuses, an unusable
 * TLS Secret, a reconcile that threw): the previous status with phase Blocked (stalled) or the error recorded
 * (not stalled: the next pass retries), Ready/Reconciling/Stalled set accordingly.
 */
export function stoppedStatus(previous: SvcClusterStatus | undefined, generation: number | undefined, reason: string, message: string, now: Date, stalled = true): SvcClusterStatus {
  const keep = (previous?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.type !== 'Reconciling' && c.type !== 'Stalled');
  const drafts: Draft[] = [
    cond('Ready', false, reason, message),
    cond('Reconciling', !stalled, stalled ? reason : 'ReconcileError', message),
    cond('Stalled', stalled, stalled ? reason : 'NotStalled', stalled ? message : 'the operator retries'),
  ];
  const status: SvcClusterStatus = { ...(previous ?? {}), conditions: [...stamp(drafts, previous, generation, now), ...keep], lastError: message };
  if (stalled) status.phase = 'Blocked';
  // the operator has seen this generation, also when acting on it failed (kstatus reads the conditions then)
  if (generation !== undefined) status.observedGeneration = generation;
  return status;
}

/** The status to publish. */
export function computeStatus(i: StatusInput): SvcClusterStatus {
  const { observed, spec, step } = i;
  const members: MemberStatus[] = observed.members.map((m) => {
    const pod = i.pods.get(m.name);
    const ms: MemberStatus = { name: m.name, ready: pod?.ready ?? false, healthy: m.healthy, leader: m.leader };
    if (m.id !== undefined) ms.id = hexMemberId(m.id);
    if (m.release !== undefined) ms.release = m.release;
    if (pod?.image !== undefined) ms.image = pod.image;
    if (observed.clusterMembers?.some((c) => c.member === m.name && c.isLearner)) ms.learner = true;
    const r = observed.replacements?.[m.name];
    if (r) {
      ms.replaced = { cause: r.cause, detail: r.detail, time: new Date(r.startedAt).toISOString(), previousId: hexMemberId(r.oldId) };
      if (r.finishedAt !== undefined) ms.replaced.finishedAt = new Date(r.finishedAt).toISOString();
    }
    // no raft index here: it moves with every client write, and status is written only on a meaningful change
    // (`kubectl svc status` reads the indexes live)
    return ms;
  });
  const healthy = observed.members.filter((m) => m.healthy).length;
  const ready = members.filter((m) => m.ready).length;
  // quorum of the voters there are now (while scaling, spec.replicas is where the cluster is going)
  const voters = observed.clusterMembers?.length ?? observed.members.length;
  const quorum = healthy > voters / 2;
  const releases = observed.members.map((m) => m.release).filter((r): r is string => r !== undefined).sort(compareVersions);
  const upgrading = i.progress !== undefined && i.progress.finishedAt === undefined;
  const everAvailable = i.previous?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') || i.previous?.phase === 'Running';
  const backupBlocked = i.jobFailure !== undefined && step.kind === 'snapshot';
  // a member failed outside an upgrade blocks (Stalled) without UpgradeBlocked
  const upgradeBlocked = step.kind === 'blocked' && step.condition === 'UpgradeBlocked';
  // a lost member that cannot be replaced safely yet: a person may have to act (Stalled, with the planner's why)
  const replaceStalled = step.kind === 'wait' && step.code === 'ReplacementNotSafe';
  // quorum lost (planner/healing.ts quorumLoss, the planner's own verdict): only `recover` gets out of it
  const lostQuorum = quorumLoss(observed);
  const refused = writesRefused(observed, i.name ?? '<cluster>');
  const podProblems = i.podProblems ?? [];
  let phase: Phase;
  const fixed = stepPhase(step);
  if (fixed) phase = fixed;
  else if (backupBlocked) phase = 'Blocked';
  // a rollout of a configuration or certificate change restarts members like an upgrade does
  else if (upgrading || (i.rollout !== undefined && i.rollout.finishedAt === undefined)) phase = 'Upgrading';
  else if (everAvailable && observed.members.length > 0 && (observed.members.length !== spec.replicas || isScalingStep(step))) phase = 'Scaling';
  // Every member healthy is Running, also while the planner waits (a follower catching up after a burst of writes)
  // and right after an upgrade, when the restarted pod's Ready lags its member's /health by a probe period (READY
  // shows the lag): `kubectl get svcc -w` must not flash Degraded while nothing is wrong
  else if (healthy === spec.replicas && healthy > 0 && (ready === spec.replicas || i.progress?.finishedAt !== undefined)) phase = 'Running';
  else if (!everAvailable && !(healthy === spec.replicas && healthy > 0)) phase = 'Creating';
  else phase = 'Degraded';

  const line = statusLine(step);
  const reason = statusReason(step);
  const drafts = [
    cond('Available', quorum, quorum ? 'QuorumHealthy' : 'QuorumLost', lostQuorum ? lostQuorum.message : `${healthy} of ${voters} members healthy`),
    cond('Progressing', step.kind !== 'steady', reason, step.kind === 'steady' ? `every member runs ${spec.version}` : line),
    cond('Upgrading', upgrading, upgrading ? 'UpgradeInProgress' : 'NoUpgrade', upgrading ? `${i.progress!.from} -> ${i.progress!.to}: ${i.progress!.step}` : 'no upgrade under way'),
    cond('Degraded', healthy < observed.members.length && phase !== 'Creating', healthy < observed.members.length ? 'MembersUnhealthy' : 'AllHealthy', `${observed.members.length - healthy} member(s) not healthy`),
    i.jobFailure ? cond('BackupReady', false, i.jobFailure.reason, i.jobFailure.message) : ((b) => cond('BackupReady', b.ok, b.reason, b.message))(backupReadyState(i.backups, i.progress?.snapshot)),
    ...((v) => (v ? [cond('BackupVerified', v.ok, v.reason, v.message)] : []))(backupVerifiedState(i.backups)),
    ...(i.agentDestinations ? [continuousBackupCondition(i.agentDestinations)] : []),
    observed.suspended
      ? cond('Suspended', true, 'ReconcileSuspended', 'annotation svc.dev/reconcile: suspended: nothing is changed until it is removed (kubectl svc resume); status and Events keep flowing')
      : cond('Suspended', false, 'NotSuspended', 'the operator reconciles'),
    refused ? cond('WritesRefused', true, refused.reason, refused.message) : cond('WritesRefused', false, 'NoAlarm', 'no alarm is raised: writes are accepted'),
    backupBlocked ? cond('UpgradeBlocked', true, i.jobFailure!.reason, `no verified pre-upgrade snapshot: ${i.jobFailure!.message}`) : upgradeBlocked ? cond('UpgradeBlocked', true, step.code, step.reason) : cond('UpgradeBlocked', false, 'NotBlocked', 'the target is allowed'),
  ];
  // kstatus: Stalled = a person must act (a refusal, a failed backup, a pod Kubernetes cannot run); Reconciling = any
  // other step than steady; Ready = serving as the spec says (phase Running: every member healthy, no upgrade or
  // scaling under way).
  const stalled = phase === 'Blocked' || podProblems.length > 0 || replaceStalled || lostQuorum !== undefined;
  const stallReason = podProblems[0]?.reason ?? (lostQuorum ? 'QuorumLost' : backupBlocked ? i.jobFailure!.reason : step.kind === 'blocked' || replaceStalled ? step.code : 'NotStalled');
  const stallMessage = podProblems.length > 0 ? podProblemsLine(podProblems) : lostQuorum ? lostQuorum.message : backupBlocked ? i.jobFailure!.message : step.kind === 'blocked' || replaceStalled ? step.reason : 'nothing blocks the operator';
  // Ready and Reconciling never both True (kstatus tools would read InProgress while `kubectl wait` saw Ready): a
  // healthy cluster still waiting for something (its cluster version, a leader) is Running but not yet Ready.
  const settled = isSettled(step);
  const isReady = phase === 'Running' && !stalled && settled;
  drafts.unshift(
    cond('Ready', isReady, isReady ? 'Ready' : stalled ? stallReason : phase === 'Running' ? reason : phase, isReady ? `${healthy} of ${spec.replicas} members healthy on ${releases[0] ?? spec.version}` : stalled ? stallMessage : `phase ${phase}: ${line}`),
    cond('Reconciling', !stalled && !settled, stalled || settled ? (stalled ? 'Stalled' : 'Steady') : reason, stalled ? stallMessage : settled ? 'the cluster is as specified' : line),
    cond('Stalled', stalled, stallReason, stallMessage),
  );
  const conditions = stamp(drafts, i.previous, i.generation, i.now);
  const status: SvcClusterStatus = {
    phase,
    conditions,
    members,
    targetVersion: spec.version,
    ready: `${ready}/${spec.replicas}`,
    replicas: observed.members.length,
  };
  if (i.generation !== undefined) status.observedGeneration = i.generation;
  const leader = observed.members.find((m) => m.leader);
  if (leader) status.leader = leader.name;
  const cv = observedClusterVersion(observed);
  if (cv) status.clusterVersion = cv;
  if (releases.length > 0) status.currentVersion = releases[0];
  if (i.progress) status.upgrade = dropUndefined(upgradeStatus(i.progress));
  if (i.rollout) status.rollout = dropUndefined(rolloutStatus(i.rollout));
  if (i.backups) status.backups = i.backups;
  if (observed.maintenance) status.maintenance = maintenanceStatus(observed.maintenance.record, i.previous?.maintenance, memberQuota(spec, observed));
  // the STEP column: a pod problem first (it is what stops everything else), then the upgrade's step, then any step
  // under way but steady
  const shown = podProblems[0]?.reason ?? (upgrading ? status.upgrade?.step : undefined)
    ?? (step.kind !== 'steady' ? reason : status.upgrade?.step);
  if (shown) status.step = shown;
  const lastError = i.error ?? (podProblems.length > 0 ? podProblemsLine(podProblems) : undefined);
  if (lastError) status.lastError = lastError;
  return status;
}

/**
 * status.maintenance: the quota in effect, the last compaction and each member's last defragmentation (the record
 * keeps the last round only: members it did not defragment keep what the previous status said).
 */
export function maintenanceStatus(record: MaintenanceRecord | undefined, previous: MaintenanceStatus | undefined, quota: number): MaintenanceStatus {
  const out: MaintenanceStatus = { quotaBackendBytes: quota };
  const round = record?.round;
  if (round?.compacted && round.compactRevision !== undefined) out.lastCompaction = { revision: round.compactRevision, reason: round.reason, roundStartedAt: new Date(round.startedAt).toISOString() };
  else if (previous?.lastCompaction) out.lastCompaction = previous.lastCompaction;
  const members = new Map((previous?.members ?? []).map((m) => [m.name, m]));
  for (const [name, d] of Object.entries(round?.defrags ?? {})) {
    if (d.finishedAt === undefined) continue;
    members.set(name, { name, time: new Date(d.finishedAt).toISOString(), reason: round!.reason, ...(d.before !== undefined ? { before: d.before } : {}), ...(d.after !== undefined ? { after: d.after } : {}) });
  }
  if (members.size > 0) out.members = [...members.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  return out;
}

/** status.rollout of a recorded rollout. */
function rolloutStatus(r: RolloutProgress): RolloutStatus {
  return {
    reason: r.reason, revision: r.revision, membersDone: [...r.membersDone], startedAt: new Date(r.startedAt).toISOString(),
    finishedAt: r.finishedAt === undefined ? undefined : new Date(r.finishedAt).toISOString(),
  };
}

/**
 * One stable line for an error: an apiserver refusal (client-node's ApiException, whose message carries the response
 * headers with their dates) as its HTTP code and Status message, so a retried failure gives the same line.
 */
export function errorLine(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const body = (e as { body?: unknown }).body;
  if (typeof code === 'number' && body !== undefined) {
    try {
      const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string; reason?: string };
      if (status?.message) return `the apiserver answered ${code}${status.reason ? ` ${status.reason}` : ''}: ${status.message}`;
    } catch {
      // not a Status object: the message below
    }
  }
  return (e as Error)?.message ?? String(e);
}

/** A copy without undefined fields (what a JSON round trip through the apiserver gives back). */
export function dropUndefined<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Canonical JSON (sorted keys), to compare a computed status with the stored one. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
