// The few Kubernetes API calls the operator makes, on @kubernetes/client-node: every write of the controller goes
// through here. Writes are server-side apply (field manager "svc-operator") guarded by a hash annotation, merge
// patches of one annotation, status applies, Events, a pod deleted for a restart and the backup Jobs and claim; an
// unchanged object is never written. Read-your-writes: each write's returned resourceVersion is remembered, and an
// informer's copy older than it is not trusted (the apiserver is read instead).
import * as k8s from '@kubernetes/client-node';
import type { V1Job, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { API_VERSION, KIND, PLURAL, type SvcClusterStatus } from '../../api/types.js';
import { CLUSTER_LABEL, HASH_ANNOTATION, type KubeObject } from './manifests.js';

export const FIELD_MANAGER = 'svc-operator';
const [GROUP, VERSION] = API_VERSION.split('/');

/** A reference to the object an Event is about. */
export interface EventTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** True for an ApiException of that HTTP status. */
export function isStatus(e: unknown, code: number): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: number }).code === code;
}

/** What `read` resolves with, or undefined when the API answers 404 (the object does not exist). */
async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    throw e;
  }
}

/**
 * What the controller's informers hold (kept current by watches). Reads of a cluster come from here, so a pass
 * over a quiet cluster makes no API request; a miss reads the apiserver.
 */
export interface ReadCache {
  /** The object of that kind (StatefulSet, Service, ConfigMap); undefined when missing or its kind is not watched. */
  object(kind: string, namespace: string, name: string): k8s.KubernetesObject | undefined;
  /** The pods of a cluster. */
  pods(namespace: string, cluster: string): V1Pod[];
}

/** How the bookkeeping below names a cluster. */
function clusterKey(namespace: string | undefined, cluster: string | undefined): string {
  return `${namespace}/${cluster}`;
}

/** True when resourceVersion `seen` is known to be at least `wrote` (they are etcd revisions; anything else: unknown, false). */
export function isAtLeast(seen: string | undefined, wrote: string): boolean {
  if (seen === undefined) return false;
  if (seen === wrote) return true;
  return /^\d+$/.test(seen) && /^\d+$/.test(wrote) && BigInt(seen) >= BigInt(wrote);
}

/** What this process wrote to one object: the resourceVersion the write returned and, for applies, the hash applied. */
interface Written {
  rv: string;
  hash?: string;
  cluster: string;
}

/** Thin typed wrapper of the API clients. */
export class KubeApi {
  /** Set by the controller once its informers have synced. */
  cache: ReadCache | undefined;
  /** Per object ("Kind namespace/name"), what this process wrote last. */
  private readonly written = new Map<string, Written>();
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly batch: k8s.BatchV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly discovery: k8s.DiscoveryV1Api;
  readonly storage: k8s.StorageV1Api;
  readonly objects: k8s.KubernetesObjectApi;
  /** Write requests made (applies, patches, deletes, events): tests read it. */
  writes = 0;
  /** The last few writes, "<what> <namespace>/<name>: <detail>", newest last: tests print them. */
  readonly recentWrites: string[] = [];

  private wrote(what: string, namespace: string | undefined, name: string | undefined, detail = ''): void {
    this.writes++;
    this.recentWrites.push(`${what} ${namespace ?? ''}/${name ?? ''}${detail ? `: ${detail}` : ''}`);
    if (this.recentWrites.length > 20) this.recentWrites.shift();
  }

  constructor(readonly kc: k8s.KubeConfig) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
    this.batch = kc.makeApiClient(k8s.BatchV1Api);
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
    this.discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    this.storage = kc.makeApiClient(k8s.StorageV1Api);
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  }

  /** Remembers the resourceVersion a write of `kind` `namespace/name` returned. */
  private remember(kind: string, namespace: string | undefined, name: string | undefined, cluster: string | undefined, rv: string | undefined, hash?: string): void {
    const key = `${kind} ${namespace}/${name}`;
    if (rv === undefined) this.written.delete(key); // unknown: the next read goes to the apiserver
    else this.written.set(key, { rv, cluster: clusterKey(namespace, cluster), ...(hash !== undefined ? { hash } : {}) });
  }

  /** The informers' copy of an object unless it is older than what this process wrote to it; `miss` when not cached. */
  private cachedObject(kind: string, namespace: string, name: string): k8s.KubernetesObject | 'stale' | undefined {
    const hit = this.cache?.object(kind, namespace, name);
    const mine = this.written.get(`${kind} ${namespace}/${name}`);
    if (hit && mine && !isAtLeast(hit.metadata?.resourceVersion, mine.rv)) return 'stale';
    return hit;
  }

  /** Forgets a deleted cluster's bookkeeping. */
  forgetCluster(namespace: string, cluster: string): void {
    const key = clusterKey(namespace, cluster);
    for (const [k, v] of this.written) if (v.cluster === key) this.written.delete(k);
  }

  /** Forgets that an object was applied (it was deleted: the next pass writes it again). */
  forgetObject(kind: string, namespace: string, name: string): void {
    this.written.delete(`${kind} ${namespace}/${name}`);
  }

  /** The StatefulSet, or undefined when it does not exist. */
  async readStatefulSet(namespace: string, name: string): Promise<V1StatefulSet | undefined> {
    const hit = this.cachedObject('StatefulSet', namespace, name);
    if (hit && hit !== 'stale') return hit as V1StatefulSet;
    return unlessMissing(this.apps.readNamespacedStatefulSet({ namespace, name }));
  }

  /** The pods of cluster `cluster` (selected by `labelSelector` when read from the apiserver). */
  async listPods(namespace: string, cluster: string, labelSelector: string): Promise<V1Pod[]> {
    const pods = this.cache?.pods(namespace, cluster);
    // a pod this process deleted whose cached copy does not show it yet: ask the apiserver
    const stale = pods?.some((p) => {
      const mine = this.written.get(`Pod ${namespace}/${p.metadata?.name}`);
      return mine !== undefined && !isAtLeast(p.metadata?.resourceVersion, mine.rv);
    });
    if (pods && !stale) return pods;
    return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  async deletePod(namespace: string, name: string, cluster: string): Promise<void> {
    this.wrote('delete pod', namespace, name);
    try {
      const gone = await this.core.deleteNamespacedPod({ namespace, name });
      this.remember('Pod', namespace, name, cluster, gone.metadata?.resourceVersion);
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
  }

  /** Applies `obj` unless the live object carries the same hash annotation; true when it wrote. */
  async apply(obj: KubeObject): Promise<boolean> {
    const want = obj.metadata.annotations?.[HASH_ANNOTATION];
    const { namespace, name } = obj.metadata;
    const cluster = obj.metadata.labels?.[CLUSTER_LABEL];
    const key = `${obj.kind} ${namespace}/${name}`;
    if (want !== undefined && this.cache) {
      // the informers' copy when they watch the kind and it is not older than this process's last write of it;
      // else what this process applied (a kind without informer, the PDB, is read again only after a restart)
      const hit = this.cachedObject(obj.kind, namespace, name);
      const mine = this.written.get(key);
      if (hit !== 'stale' && hit?.metadata?.annotations?.[HASH_ANNOTATION] === want) return false;
      if ((hit === 'stale' || hit === undefined) && mine?.hash === want) return false;
    } else if (want !== undefined) {
      // no informers (a runtime driven directly): the live object
      try {
        const live = await this.objects.read({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, namespace } });
        if (live.metadata?.annotations?.[HASH_ANNOTATION] === want) return false;
      } catch (e) {
        if (!isStatus(e, 404)) throw e;
      }
    }
    this.wrote(`apply ${obj.kind}`, namespace, name);
    const out = await this.objects.patch(obj as k8s.KubernetesObject, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
    this.remember(obj.kind, namespace, name, cluster, out.metadata?.resourceVersion, want);
    return true;
  }

  /** Applies each object in order; resolves with the number written. */
  async applyAll(objs: KubeObject[]): Promise<number> {
    let n = 0;
    for (const o of objs) if (await this.apply(o)) n++;
    return n;
  }

  /** Deletes a claim (a member's data, for its replacement); a missing one is no error. */
  async deleteClaim(namespace: string, name: string): Promise<void> {
    this.wrote('delete pvc', namespace, name);
    try {
      await this.core.deleteNamespacedPersistentVolumeClaim({ namespace, name });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
  }

  /** Sets the requested size of a claim (an expansion: the class must allow it, the apiserver refuses otherwise). */
  async resizeClaim(namespace: string, name: string, size: string): Promise<void> {
    this.wrote(`resize pvc to ${size}`, namespace, name);
    await this.core.patchNamespacedPersistentVolumeClaim({ namespace, name, body: { spec: { resources: { requests: { storage: size } } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  }

  /** Whether StorageClass `name` allows volume expansion; undefined when it cannot be read (no such class, no access). */
  async classAllowsExpansion(name: string): Promise<boolean | undefined> {
    try {
      return (await this.storage.readStorageClass({ name })).allowVolumeExpansion === true;
    } catch {
      return undefined;
    }
  }

  /** The name of the cluster's default StorageClass, if one is marked so (and readable). */
  async defaultStorageClass(): Promise<string | undefined> {
    try {
      const all = await this.storage.listStorageClass();
      return all.items.find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true')?.metadata?.name;
    } catch {
      return undefined;
    }
  }

  /**
   * Deletes a StatefulSet leaving its pods and claims (propagationPolicy Orphan: no member restarts) and waits until
   * it is gone (the garbage collector releases the pods first), for at most `timeoutMs`; false when it is not gone yet.
   */
  async orphanStatefulSet(namespace: string, name: string, timeoutMs = 20_000): Promise<boolean> {
    this.wrote('delete statefulset (orphan)', namespace, name);
    try {
      await this.apps.deleteNamespacedStatefulSet({ namespace, name, propagationPolicy: 'Orphan' });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
    this.forgetObject('StatefulSet', namespace, name);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        await this.apps.readNamespacedStatefulSet({ namespace, name });
      } catch (e) {
        if (isStatus(e, 404)) return true;
        throw e;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  /** A claim as it is now; undefined when there is none. */
  async readClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> {
    return unlessMissing(this.core.readNamespacedPersistentVolumeClaim({ namespace, name }));
  }

  /** Creates a claim (the default backup claim). */
  async createClaim(namespace: string, body: V1PersistentVolumeClaim): Promise<void> {
    this.wrote('create pvc', namespace, body.metadata?.name);
    await this.core.createNamespacedPersistentVolumeClaim({ namespace, body });
  }

  /** Creates a Job (a backup or a restore). */
  async createJob(namespace: string, body: V1Job): Promise<V1Job> {
    this.wrote('create job', namespace, body.metadata?.name);
    return this.batch.createNamespacedJob({ namespace, body });
  }

  /** Deletes a Job and, in the background, its pod; a missing one is no error. */
  async deleteJob(namespace: string, name: string): Promise<void> {
    this.wrote('delete job', namespace, name);
    try {
      await this.batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
  }

  /** The Deployment, or undefined when it does not exist. */
  async readDeployment(namespace: string, name: string): Promise<k8s.V1Deployment | undefined> {
    return unlessMissing(this.apps.readNamespacedDeployment({ namespace, name }));
  }

  /** Deletes a Deployment and, in the background, its pods; a missing one is no error. */
  async deleteDeployment(namespace: string, name: string): Promise<void> {
    this.wrote('delete deployment', namespace, name);
    this.forgetObject('Deployment', namespace, name);
    try {
      await this.apps.deleteNamespacedDeployment({ namespace, name, propagationPolicy: 'Background' });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
  }

  /** Sets one label of a pod. */
  async patchPodLabel(namespace: string, name: string, key: string, value: string): Promise<void> {
    this.wrote(`label ${key}=${value}`, namespace, name);
    await this.core.patchNamespacedPod({ namespace, name, body: { metadata: { labels: { [key]: value } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  }

  /** The pods the EndpointSlices of Service `service` list as ready. */
  async readyEndpointPods(namespace: string, service: string): Promise<Set<string>> {
    const slices = await this.discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
    const out = new Set<string>();
    for (const sl of slices.items) {
      for (const e of sl.endpoints ?? []) if (e.conditions?.ready !== false && e.targetRef?.kind === 'Pod' && e.targetRef.name) out.add(e.targetRef.name);
    }
    return out;
  }

  /** Sets (or with null removes) one annotation of an SvcCluster. */
  /**
   * Writes annotations of an SvcCluster (a null removes one) only if it is still at `resourceVersion` (the API answers
   * 409 otherwise); resolves with the resourceVersion of the write. The operator's record document goes this way.
   */
  async patchClusterRecords(namespace: string, name: string, annotations: Record<string, string | null>, resourceVersion: string): Promise<string> {
    this.wrote(`annotate ${Object.keys(annotations).join(',')}`, namespace, name);
    const out = await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { metadata: { resourceVersion, annotations } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    ) as k8s.KubernetesObject;
    return out?.metadata?.resourceVersion ?? resourceVersion;
  }

  /** The SvcCluster as the API has it now (not an informer's copy); undefined when it is gone. */
  async readCluster(namespace: string, name: string): Promise<(k8s.KubernetesObject & { status?: SvcClusterStatus }) | undefined> {
    return unlessMissing(this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as Promise<k8s.KubernetesObject & { status?: SvcClusterStatus }>);
  }

  /** Sets (or, null, removes) an annotation a person owns: a request (kubectl svc ...). The records go by patchClusterRecords. */
  async patchClusterAnnotation(namespace: string, name: string, key: string, value: string | null): Promise<void> {
    this.wrote(`annotate ${key}`, namespace, name);
    await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { metadata: { annotations: { [key]: value } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }

  /** Status writes made (tests count them: at most one per pass). */
  statusWrites = 0;

  /**
   * Applies the status of an SvcCluster (the fields this manager set before and omits now are removed); resolves
   * with the resourceVersion the write returned.
   */
  async applyStatus(namespace: string, name: string, status: object): Promise<string | undefined> {
    this.wrote('status', namespace, name, JSON.stringify(status));
    this.statusWrites++;
    const out = await this.custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP, version: VERSION, plural: PLURAL, namespace, name, fieldManager: FIELD_MANAGER, force: true,
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, status },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
    ) as k8s.KubernetesObject;
    return out?.metadata?.resourceVersion;
  }

  /** Records a core/v1 Event about an SvcCluster. */
  async event(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    this.wrote(`event ${reason}`, target.namespace, target.name, message);
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace: target.namespace,
      body: {
        metadata: { generateName: `${target.name}.`, namespace: target.namespace },
        involvedObject: { apiVersion: API_VERSION, kind: KIND, name: target.name, namespace: target.namespace, uid: target.uid },
        type, reason, message: message.slice(0, 1000),
        source: { component: FIELD_MANAGER },
        firstTimestamp: now, lastTimestamp: now, count: 1,
        reportingComponent: FIELD_MANAGER, reportingInstance: FIELD_MANAGER,
      },
    });
  }
}
