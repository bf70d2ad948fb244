// SvcCluster status from one observation, the planned step and the recorded progress: pure. Conditions keep
// their lastTransitionTime while their status stays the same, so an unchanged cluster gives an equal status.
import type { BackupsStatus, Condition, ConditionType, MemberStatus, Phase, SvcClusterSpec, SvcClusterStatus } from '../api/types.js';
import { backupReadyState } from '../backup/schedule.js';
import { observedClusterVersion } from '../upgrade/plan.js';
import { upgradeStatus } from '../upgrade/status.js';
import { isScalingStep, type ObservedCluster, type Step, type UpgradeProgress } from '../upgrade/types.js';
import { compareVersions } from '../upgrade/versions.js';

/** Pod facts status shows next to what members answer. */
export interface PodFacts {
  image?: string;
  ready: boolean;
}

export interface StatusInput {
  generation?: number;
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
  /** status.backups: the claim and the backups kept (BackupReady says where the newest is). */
  backups?: BackupsStatus;
}

function cond(type: ConditionType, ok: boolean, reason: string, message: string): Omit<Condition, 'lastTransitionTime'> {
  return { type, status: ok ? 'True' : 'False', reason, message };
}

/** The status to publish. */
export function computeStatus(i: StatusInput): SvcClusterStatus {
  const { observed, spec, step } = i;
  const members: MemberStatus[] = observed.members.map((m) => {
    const pod = i.pods.get(m.name);
    const ms: MemberStatus = { name: m.name, ready: pod?.ready ?? false, healthy: m.healthy, leader: m.leader };
    if (m.id !== undefined) ms.id = m.id;
    if (m.release !== undefined) ms.release = m.release;
    if (pod?.image !== undefined) ms.image = pod.image;
    if (m.appliedIndex !== undefined) ms.raftIndex = m.appliedIndex;
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
  let phase: Phase;
  if (step.kind === 'blocked' || backupBlocked) phase = 'Blocked';
  else if (upgrading) phase = 'Upgrading';
  else if (everAvailable && observed.members.length > 0 && (observed.members.length !== spec.replicas || isScalingStep(step))) phase = 'Scaling';
  // Every member healthy is Running, also while the planner waits (a follower catching up after a burst of writes)
  // and right after an upgrade, when the restarted pod's Ready lags its member's /health by a probe period (READY
  // shows the lag): `kubectl get svcc -w` must not flash Degraded while nothing is wrong
  else if (healthy === spec.replicas && healthy > 0 && (ready === spec.replicas || i.progress?.finishedAt !== undefined)) phase = 'Running';
  else if (!everAvailable && !(healthy === spec.replicas && healthy > 0)) phase = 'Creating';
  else phase = 'Degraded';

  const waitLine = step.kind === 'wait' || step.kind === 'blocked' ? step.reason : '';
  const drafts = [
    cond('Available', quorum, quorum ? 'QuorumHealthy' : 'QuorumLost', `${healthy} of ${voters} members healthy`),
    cond('Progressing', step.kind !== 'steady', step.kind === 'steady' ? 'Steady' : step.kind === 'wait' ? step.code : step.kind === 'blocked' ? step.code : step.kind, step.kind === 'steady' ? `every member runs ${spec.version}` : waitLine || step.kind),
    cond('Upgrading', upgrading, upgrading ? 'UpgradeInProgress' : 'NoUpgrade', upgrading ? `${i.progress!.from} -> ${i.progress!.to}: ${i.progress!.step}` : 'no upgrade under way'),
    cond('Degraded', healthy < observed.members.length && phase !== 'Creating', healthy < observed.members.length ? 'MembersUnhealthy' : 'AllHealthy', `${observed.members.length - healthy} member(s) not healthy`),
    i.jobFailure ? cond('BackupReady', false, i.jobFailure.reason, i.jobFailure.message) : ((b) => cond('BackupReady', b.ok, b.reason, b.message))(backupReadyState(i.backups, i.progress?.snapshot)),
    backupBlocked ? cond('UpgradeBlocked', true, i.jobFailure!.reason, `no verified pre-upgrade snapshot: ${i.jobFailure!.message}`) : cond('UpgradeBlocked', step.kind === 'blocked', step.kind === 'blocked' ? step.code : 'NotBlocked', step.kind === 'blocked' ? step.reason : 'the target is allowed'),
  ];
  const conditions: Condition[] = drafts.map((d) => {
    const prev = i.previous?.conditions?.find((c) => c.type === d.type);
    return { ...d, lastTransitionTime: prev && prev.status === d.status ? prev.lastTransitionTime : i.now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  });
  const status: SvcClusterStatus = {
    phase,
    conditions,
    members,
    targetVersion: spec.version,
    ready: `${ready}/${spec.replicas}`,
  };
  if (i.generation !== undefined) status.observedGeneration = i.generation;
  const leader = observed.members.find((m) => m.leader);
  if (leader) status.leader = leader.name;
  const cv = observedClusterVersion(observed);
  if (cv) status.clusterVersion = cv;
  if (releases.length > 0) status.currentVersion = releases[0];
  if (i.progress) status.upgrade = dropUndefined(upgradeStatus(i.progress));
  if (i.backups) status.backups = i.backups;
  if (i.error) status.lastError = i.error;
  return status;
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
