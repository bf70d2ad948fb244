// Quorum-loss recovery on Kubernetes: the request is the annotation svc.dev/recover on the SvcCluster (set by
// `kubectl svc recover <cluster>`, or written in a manifest by GitOps users), the record the recovery of the record
// document (kube-records.ts; written before each recovery step; status.recovery is its readable form).
import type { RecoveryProgress } from '../../planner/types.js';

/** Pod template annotation naming the member started with --force-new-cluster (only while that start is under way). */
export const FORCE_ANNOTATION = 'svc.dev/force-new-cluster';

/**
 * While a recovery is past its snapshot and not finished, the members that start empty must never bootstrap a
 * cluster of their own (two lost members of three would be a majority of the old membership): the ConfigMap names
 * the survivor as the cluster to join (`existing`) until a scaling step after the recovery's start names its own.
 */
export function recoveryJoin(rec: RecoveryProgress | undefined): string[] | undefined {
  return rec && rec.step !== 'recoverSnapshot' ? [rec.survivor] : undefined;
}

/** The member the template starts with --force-new-cluster: the survivor, only while the forced start is the step under way. */
export function forcedMember(rec: RecoveryProgress | undefined): string | undefined {
  return rec && rec.finishedAt === undefined && rec.step === 'forceNewCluster' ? rec.survivor : undefined;
}
