// Member add/remove on Kubernetes: a member is a StatefulSet ordinal. Starting the next one = the ConfigMap
// names its initial cluster (--initial-cluster-state=existing), then the StatefulSet grows by one; retiring the
// highest = the StatefulSet shrinks by one, its pod goes, then its PVC (whenScaled: Delete; the operator holds
// no right to delete claims, a later member of that ordinal waits for it): a member re-added later must start on an empty data dir,
// one with the old member's data is refused by the cluster. The record of the scaling step
// under way is the scaling record of the record document (kube-records.ts), written before the step.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { RuntimeError, StepPending } from '../runtime.js';
import { isStatus, type KubeApi } from './kube-api.js';
import { memberHost, memberPeerURL, type ClusterRef } from './manifests.js';

/** PVC of member `pod` (the StatefulSet's claim template is "data"). */
export const dataClaimName = (pod: string): string => `data-${pod}`;

/** What the scaling calls need of the runtime. */
export interface ScalingHost {
  api: KubeApi;
  cluster: ClusterRef;
  /** Applies the owned objects with the StatefulSet's release where it is and `replicas` members (new ones joining `join`). */
  applyWith(replicas: number, join?: string[]): Promise<void>;
  /** Whether the pod object `name` exists (terminating or not). */
  podExists(name: string): Promise<boolean>;
}

const ordinal = (name: string): number => Number(/(\d+)$/.exec(name)?.[1] ?? NaN);

export function peerURLOf(cluster: ClusterRef, name: string): string {
  return memberPeerURL(cluster, name);
}

/** The pod name of a peer URL "<scheme>://<pod>.<peers>.<ns>.svc:<port>". */
export function memberOfPeerURLIn(cluster: ClusterRef, url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const pod = host.split('.')[0];
  return host === memberHost(cluster.name, cluster.namespace, pod) && pod.startsWith(`${cluster.name}-`) ? pod : undefined;
}

async function readClaim(h: ScalingHost, name: string): Promise<V1PersistentVolumeClaim | undefined> {
  try {
    return await h.api.core.readNamespacedPersistentVolumeClaim({ namespace: h.cluster.namespace, name });
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    throw e;
  }
}

/**
 * Passes when the claim is gone; StepPending while it is being deleted (whenScaled: Delete: owned by the pod that
 * went, or marked for deletion); a RuntimeError naming the `kubectl delete pvc` when nothing will delete it.
 */
async function claimGone(h: ScalingHost, name: string, why: string): Promise<void> {
  const claim = await readClaim(h, name);
  if (!claim) return;
  const pending = claim.metadata?.deletionTimestamp || claim.metadata?.ownerReferences?.some((o) => o.kind === 'Pod');
  if (pending) throw new StepPending('ClaimDeleting', `PVC ${name} (${why}) is being deleted`);
  throw new RuntimeError('STOP_FAILED', `PVC ${name} (${why}) holds the data of an earlier member of this ordinal and is not being deleted; delete it (kubectl -n ${h.cluster.namespace} delete pvc ${name}) so that the new member starts empty`);
}

/** Starts member `name` (the next ordinal) joining `join`, on an empty data dir (the pod's start is observed later). */
export async function startJoiningMember(h: ScalingHost, name: string, join: string[]): Promise<void> {
  const k = ordinal(name);
  // A claim left by an earlier member of this ordinal (a crash between its pod going and its claim going)
  // holds that member's data: the new member must not start on it.
  if (!(await h.podExists(name))) await claimGone(h, dataClaimName(name), 'left by an earlier member');
  await h.applyWith(k + 1, join);
}

/**
 * Stops member `name` (the highest ordinal): the StatefulSet shrinks by one; its pod goes and then its PVC
 * (whenScaled: Delete), without the operator waiting: a later member of this ordinal waits for the claim to go.
 */
export async function retireHighestMember(h: ScalingHost, name: string): Promise<void> {
  await h.applyWith(ordinal(name));
}
