// Pure bookkeeping of UpgradeProgress: what the orchestrator records before a step and after it.
import type { SnapshotRecord } from '../api/types.js';
import { restartReason } from './plan.js';
import type { ObservedCluster, RolloutProgress, Step, TargetRevision, UpgradeProgress } from './types.js';

/** The progress to persist BEFORE carrying out `step` (write-ahead), or the same object when nothing changes. */
export function beginStep(progress: UpgradeProgress | undefined, step: Step, now: number): UpgradeProgress | undefined {
  switch (step.kind) {
    case 'snapshot': {
      const same = progress && progress.to === step.to && progress.finishedAt === undefined;
      const base: UpgradeProgress = same ? progress : { from: step.from, to: step.to, step: 'snapshot', startedAt: now, restarts: {}, membersDone: [], ...(step.hops && step.hops.length > 1 ? { hops: step.hops } : {}) };
      return { ...base, step: 'snapshot', snapshot: undefined };
    }
    case 'restartMember':
      if (!progress) return progress;
      return { ...progress, step: 'restartMember', restarts: { ...progress.restarts, [step.member]: now } };
    case 'moveLeader':
      // (a finished upgrade stays as it ended: a scale-down moves leadership too)
      return progress && progress.finishedAt === undefined ? { ...progress, step: 'moveLeader' } : progress;
    case 'complete':
      return progress ? { ...progress, step: 'complete', finishedAt: now } : progress;
    default:
      return progress;
  }
}

/** Progress after a verified snapshot. */
export function recordSnapshot(progress: UpgradeProgress, snapshot: SnapshotRecord): UpgradeProgress {
  return { ...progress, snapshot };
}

/** Progress with members newly seen on the target (healthy) appended to membersDone; same object when unchanged. */
export function noteMembersDone(progress: UpgradeProgress | undefined, o: ObservedCluster): UpgradeProgress | undefined {
  if (!progress || progress.finishedAt !== undefined || !progress.snapshot) return progress;
  const fresh = o.members
    .filter((m) => m.release === progress.to && m.configuredVersion === progress.to && m.healthy && !progress.membersDone.includes(m.name))
    .map((m) => m.name)
    .sort();
  return fresh.length === 0 ? progress : { ...progress, membersDone: [...progress.membersDone, ...fresh] };
}

/** Progress once the cluster is steady on `version`: an unfinished upgrade toward another version is closed as superseded. */
export function settle(progress: UpgradeProgress | undefined, version: string, now: number): UpgradeProgress | undefined {
  if (!progress || progress.finishedAt !== undefined || progress.to === version) return progress;
  return { ...progress, step: 'steady', finishedAt: now, supersededBy: version };
}

/** "<config>/<tls>" of a target revision. */
export function revisionKey(r: TargetRevision): string {
  return `${r.config}/${r.tls ?? ''}${r.restart ? `/${r.restart.token}` : ''}`;
}

/** The rollout record to persist BEFORE a restart for a configuration or certificate change; same object when unchanged. */
export function beginRollout(rollout: RolloutProgress | undefined, step: Step, target: TargetRevision | undefined, now: number): RolloutProgress | undefined {
  if (step.kind !== 'restartMember' || !target || (step.reason !== 'SpecChange' && step.reason !== 'CertificateRenewed' && step.reason !== 'RestartRequested')) return rollout;
  const key = revisionKey(target);
  const base: RolloutProgress = rollout && rollout.revision === key && rollout.finishedAt === undefined ? rollout : { reason: step.reason, revision: key, startedAt: now, restarts: {}, membersDone: [] };
  return { ...base, restarts: { ...base.restarts, [step.member]: now } };
}

/** The rollout with members newly seen on the target revision (healthy) noted, and finished once none differs. */
export function noteRollout(rollout: RolloutProgress | undefined, o: ObservedCluster, now: number): RolloutProgress | undefined {
  if (!rollout || rollout.finishedAt !== undefined || !o.revision || rollout.revision !== revisionKey(o.revision)) return rollout;
  const fresh = o.members.filter((m) => m.healthy && rollout.restarts[m.name] !== undefined && restartReason(m, o.revision) === undefined && !rollout.membersDone.includes(m.name)).map((m) => m.name).sort();
  const finished = o.members.length > 0 && o.members.every((m) => m.healthy && restartReason(m, o.revision) === undefined);
  if (fresh.length === 0 && !finished) return rollout;
  return { ...rollout, membersDone: [...rollout.membersDone, ...fresh], ...(finished ? { finishedAt: now } : {}) };
}
