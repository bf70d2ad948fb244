// The desired state of one SvcCluster on Kubernetes, a pure function of its spec and what a pass observed (the
// StatefulSet's release and size, the initial cluster of the member that joined last, the TLS fingerprint): the
// owned objects, the members' configuration and the revision members started from it run with. The runtime
// computes it once per pass and applies it; a step that moves the template (a restart on a new release, a member
// added or retired) computes the next one. The spec is never edited with what is observed.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { memberConfig, type MemberConfig } from '../../api/member-config.js';
import type { TargetRevision } from '../../planner/types.js';
import { onLiveVolumes, ownedObjects, releaseOf, revisionOf, type ClusterRef, type KubeObject, type LiveShape } from './manifests.js';

export interface DesiredState {
  /** The release of the StatefulSet's template. */
  release: string;
  /** The observation it was computed from. */
  live: LiveShape;
  /** Every owned object, in the order they are applied. */
  objects: KubeObject[];
  /** The configuration of members of `release`. */
  member: MemberConfig;
  /** The revision of a member started from this template. */
  revision: TargetRevision;
}

/** The owned objects and member configuration of `cluster` with its StatefulSet on `release`. */
export function desiredState(cluster: ClusterRef, release: string, live: LiveShape): DesiredState {
  const c = { ...cluster, spec: onLiveVolumes(cluster.spec, live) };
  return { release, live, objects: ownedObjects(c, release, live), member: memberConfig(c.spec, release), revision: revisionOf(c.spec, release, live) };
}

/** The revision members run with once the cluster is where its spec says (spec.version): no build needed. */
export function targetRevision(cluster: ClusterRef, live: LiveShape): TargetRevision {
  return revisionOf(onLiveVolumes(cluster.spec, live), cluster.spec.version, live);
}

/** What of a live StatefulSet the desired state keeps: its release (where the upgrade left it) and its size. */
export function liveStatefulSet(sts: V1StatefulSet | undefined): { release?: string; replicas?: number; storage?: string } {
  if (!sts) return {};
  const storage = sts.spec?.volumeClaimTemplates?.find((t) => t.metadata?.name === 'data')?.spec?.resources?.requests?.storage;
  return { release: releaseOf(sts.spec?.template), replicas: sts.spec?.replicas, ...(storage !== undefined ? { storage: String(storage) } : {}) };
}
