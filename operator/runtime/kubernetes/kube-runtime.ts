// The Kubernetes runtime: the members of one SvcCluster are the pods of its StatefulSet (OnDelete updates).
// A restart is "move the template to the new image, delete the pod, wait for its replacement"; progress is
// recorded on the SvcCluster itself (an annotation with the exact record, status.upgrade for people) before
// the step it announces is carried out.
import { join } from 'node:path';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { RuntimeError, type Runtime, type RuntimeMember } from '../runtime.js';
import type { SvcClusterSpec } from '../../api/types.js';
import { pruneSnapshotDir, snapshotPath } from '../snapshot-files.js';
import type { UpgradeProgress } from '../../upgrade/types.js';
import { memberClientURL, ownedObjects, selectorLabels, versionOfImage, type ClusterRef } from './manifests.js';
import type { KubeApi } from './kube-api.js';
import type { MemberClient } from '../../members/index.js';
import { memberOfPeerURLIn, peerURLOf, retireHighestMember, startJoiningMember, type ScalingHost } from './kube-scaling.js';
import type { ScalingRuntime } from '../scaling.js';

/** Annotation on the SvcCluster holding the exact UpgradeProgress (status.upgrade is its readable form). */
export const PROGRESS_ANNOTATION = 'svc.dev/upgrade-progress';

export interface KubeRuntimeOptions {
  /** Where snapshots are written (a mounted backup PVC in a pod). */
  snapshotDir: string;
  /** Recorded progress as read from the SvcCluster (annotation), if any. */
  progress?: UpgradeProgress;
  /** Called after progress was saved (the controller publishes it in status). */
  onProgress?: (p: UpgradeProgress | undefined) => Promise<void>;
  /** How long to wait for a deleted pod's replacement. Default 120 s. */
  replaceTimeoutMs?: number;
  /** Reads the v2 data-size estimate from a member (without it: unknown, treated as small). */
  client?: MemberClient;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why a pod cannot keep its svc container running, if it cannot. */
function podFailure(pod: V1Pod): string | undefined {
  const cs = pod.status?.containerStatuses?.find((c) => c.name === 'svc');
  if (!cs) return undefined;
  const waiting = cs.state?.waiting;
  if (waiting?.reason === 'CrashLoopBackOff' || (cs.restartCount ?? 0) >= 3) {
    const last = cs.lastState?.terminated;
    return `container restarted ${cs.restartCount ?? 0} times${last ? ` (last exit ${last.exitCode}${last.reason ? ` ${last.reason}` : ''})` : ''}`;
  }
  return undefined;
}

/** The pod's image (of the svc container). */
export function podImage(pod: V1Pod): string | undefined {
  return pod.spec?.containers.find((c) => c.name === 'svc')?.image;
}

/** Runtime of one SvcCluster on Kubernetes. */
export class KubeRuntime implements Runtime, ScalingRuntime {
  readonly kind = 'kubernetes';
  private progress: UpgradeProgress | undefined;

  constructor(private readonly api: KubeApi, private readonly cluster: ClusterRef, private readonly opts: KubeRuntimeOptions) {
    this.progress = opts.progress;
  }

  private async statefulSet(): Promise<V1StatefulSet | undefined> {
    return this.api.readStatefulSet(this.cluster.namespace, this.cluster.name);
  }

  /** The member pods, by name. */
  async pods(): Promise<Map<string, V1Pod>> {
    const sel = Object.entries(selectorLabels(this.cluster.name)).map(([k, v]) => `${k}=${v}`).join(',');
    const pods = await this.api.listPods(this.cluster.namespace, sel);
    return new Map(pods.map((p) => [p.metadata!.name!, p]));
  }

  /** The release the StatefulSet template runs (undefined without a StatefulSet). */
  async templateVersion(): Promise<string | undefined> {
    const sts = await this.statefulSet();
    return sts ? versionOfImage(sts.spec?.template.spec?.containers.find((c) => c.name === 'svc')?.image) : undefined;
  }

  async members(): Promise<RuntimeMember[]> {
    const sts = await this.statefulSet();
    if (!sts) return [];
    const template = versionOfImage(sts.spec?.template.spec?.containers.find((c) => c.name === 'svc')?.image) ?? this.cluster.spec.version;
    const pods = await this.pods();
    const replicas = sts.spec?.replicas ?? this.cluster.spec.replicas;
    const out: RuntimeMember[] = [];
    for (let i = 0; i < replicas; i++) {
      const name = `${this.cluster.name}-${i}`;
      const pod = pods.get(name);
      const running = pod !== undefined && !pod.metadata?.deletionTimestamp && pod.status?.phase === 'Running';
      out.push({
        name,
        clientURL: memberClientURL(this.cluster, name),
        configuredVersion: (pod && versionOfImage(podImage(pod))) ?? template,
        running,
        failure: pod ? podFailure(pod) : undefined,
      });
    }
    return out;
  }

  /** Applies every owned object, the StatefulSet on `version`. */
  async apply(version: string): Promise<number> {
    return this.api.applyAll(ownedObjects(this.cluster, version));
  }

  async createCluster(spec: SvcClusterSpec): Promise<void> {
    await this.apply(spec.version);
  }

  async restartMember(name: string, version: string): Promise<void> {
    // The template first: the replacement pod is created from it. After a crash between the two, the
    // pod still shows the old image and the planner asks for this restart again.
    await this.apply(version);
    const pods = await this.pods();
    const old = pods.get(name);
    if (old && versionOfImage(podImage(old)) !== version) await this.api.deletePod(this.cluster.namespace, name);
    const oldUid = old?.metadata?.uid;
    const until = Date.now() + (this.opts.replaceTimeoutMs ?? 120_000);
    while (Date.now() < until) {
      const p = (await this.pods()).get(name);
      if (p && p.metadata?.uid !== oldUid && !p.metadata?.deletionTimestamp) return;
      if (p && versionOfImage(podImage(p)) === version && !p.metadata?.deletionTimestamp) return;
      await sleep(500);
    }
    throw new RuntimeError('START_FAILED', `pod ${name} was not replaced within ${Math.round((this.opts.replaceTimeoutMs ?? 120_000) / 1000)} s`);
  }

  private snapshotDir(): string {
    return join(this.opts.snapshotDir, this.cluster.namespace, this.cluster.name);
  }

  snapshotLocation(from: string, to: string, member: string): string {
    return snapshotPath(this.snapshotDir(), member, from, to);
  }

  async pruneSnapshots(keep: number): Promise<string[]> {
    return pruneSnapshotDir(this.snapshotDir(), keep).map((f) => join(this.snapshotDir(), f));
  }

  async loadProgress(): Promise<UpgradeProgress | undefined> {
    return this.progress;
  }

  async saveProgress(progress: UpgradeProgress | undefined): Promise<void> {
    await this.api.patchClusterAnnotation(this.cluster.namespace, this.cluster.name, PROGRESS_ANNOTATION, progress === undefined ? null : JSON.stringify(progress));
    this.progress = progress;
    await this.opts.onProgress?.(progress);
  }

  async peerURL(name: string): Promise<string> {
    return peerURLOf(this.cluster, name);
  }

  memberOfPeerURL(url: string): string | undefined {
    return memberOfPeerURLIn(this.cluster, url);
  }

  async startMember(name: string, join: string[]): Promise<void> {
    await startJoiningMember(this.scalingHost(), name, join);
  }

  async retireMember(name: string): Promise<void> {
    await retireHighestMember(this.scalingHost(), name);
  }

  private scalingHost(): ScalingHost {
    return {
      api: this.api,
      cluster: this.cluster,
      applyWith: async (replicas) => {
        this.cluster.spec = { ...this.cluster.spec, replicas };
        await this.apply((await this.templateVersion()) ?? this.cluster.spec.version);
      },
      podExists: async (name) => (await this.pods()).has(name),
      timeoutMs: this.opts.replaceTimeoutMs ?? 120_000,
    };
  }

  /** The member's own count of v2 bytes (svc_v2_store_data_bytes on /metrics); unknown when unreadable. */
  async v2DataBytes(member: string): Promise<number | undefined> {
    return this.opts.client?.v2DataBytes(memberClientURL(this.cluster, member)).catch(() => undefined);
  }
}
