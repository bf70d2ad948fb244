// The few Kubernetes API calls the operator makes, on @kubernetes/client-node. Writes are server-side apply
// (field manager "svc-operator") guarded by a hash annotation, merge patches of one annotation, status
// applies and Events; an unchanged object is never written.
import * as k8s from '@kubernetes/client-node';
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { API_VERSION, KIND, PLURAL } from '../../api/types.js';
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

/** After a write to a cluster's objects, its reads go to the apiserver this long (the informers catch up). */
const FRESH_MS = 3000;
/** An object this process applied is not read back for this long (kinds without an informer: one GET a minute). */
const APPLIED_MS = 60_000;

/** How the bookkeeping below names a cluster. */
function clusterKey(namespace: string | undefined, cluster: string | undefined): string {
  return `${namespace}/${cluster}`;
}

/** Thin typed wrapper of the API clients. */
export class KubeApi {
  /** Set by the controller once its informers have synced. */
  cache: ReadCache | undefined;
  /** Per cluster ("namespace/name"), when this process last wrote one of its objects. */
  private readonly wroteAt = new Map<string, number>();
  /** Per object ("Kind namespace/name"), the hash annotation this process applied, when, and the cluster's key. */
  private readonly applied = new Map<string, { hash: string; at: number; cluster: string }>();
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly custom: k8s.CustomObjectsApi;
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
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  }

  /** The informers, unless this process wrote to the cluster a moment ago (then they may lag behind). */
  private cached(namespace: string, cluster: string | undefined): ReadCache | undefined {
    if (!this.cache || cluster === undefined) return undefined;
    return Date.now() - (this.wroteAt.get(clusterKey(namespace, cluster)) ?? 0) > FRESH_MS ? this.cache : undefined;
  }

  private touched(namespace: string | undefined, cluster: string | undefined): void {
    if (namespace && cluster) this.wroteAt.set(clusterKey(namespace, cluster), Date.now());
  }

  /** Forgets a deleted cluster's bookkeeping. */
  forgetCluster(namespace: string, cluster: string): void {
    const key = clusterKey(namespace, cluster);
    this.wroteAt.delete(key);
    for (const [k, v] of this.applied) if (v.cluster === key) this.applied.delete(k);
  }

  /** Forgets that an object was applied (it was deleted: the next pass writes it again). */
  forgetObject(kind: string, namespace: string, name: string): void {
    this.applied.delete(`${kind} ${namespace}/${name}`);
  }

  /** The StatefulSet, or undefined when it does not exist. */
  async readStatefulSet(namespace: string, name: string): Promise<V1StatefulSet | undefined> {
    const hit = this.cached(namespace, name)?.object('StatefulSet', namespace, name);
    if (hit) return hit as V1StatefulSet;
    try {
      return await this.apps.readNamespacedStatefulSet({ namespace, name });
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  /** The pods of cluster `cluster` (selected by `labelSelector` when read from the apiserver). */
  async listPods(namespace: string, cluster: string, labelSelector: string): Promise<V1Pod[]> {
    const c = this.cached(namespace, cluster);
    if (c) return c.pods(namespace, cluster);
    return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  async deletePod(namespace: string, name: string, cluster: string): Promise<void> {
    this.wrote('delete pod', namespace, name);
    this.touched(namespace, cluster);
    try {
      await this.core.deleteNamespacedPod({ namespace, name });
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
    if (want !== undefined) {
      // the informers' copy when they watch the kind; else what this process applied a moment ago; else a GET
      const c = this.cached(namespace ?? '', cluster);
      const cachedHash = c?.object(obj.kind, namespace ?? '', name)?.metadata?.annotations?.[HASH_ANNOTATION];
      if (cachedHash === want) return false;
      const mine = this.applied.get(key);
      if (cachedHash === undefined && mine?.hash === want && Date.now() - mine.at < APPLIED_MS) return false;
    }
    try {
      const live = await this.objects.read({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, namespace } });
      if (want !== undefined && live.metadata?.annotations?.[HASH_ANNOTATION] === want) {
        this.applied.set(key, { hash: want, at: Date.now(), cluster: clusterKey(namespace, cluster) });
        return false;
      }
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
    this.wrote(`apply ${obj.kind}`, namespace, name);
    this.touched(namespace, cluster);
    await this.objects.patch(obj as k8s.KubernetesObject, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
    if (want !== undefined) this.applied.set(key, { hash: want, at: Date.now(), cluster: clusterKey(namespace, cluster) });
    return true;
  }

  /** Applies each object in order; resolves with the number written. */
  async applyAll(objs: KubeObject[]): Promise<number> {
    let n = 0;
    for (const o of objs) if (await this.apply(o)) n++;
    return n;
  }

  /** Sets (or with null removes) one annotation of an SvcCluster. */
  async patchClusterAnnotation(namespace: string, name: string, key: string, value: string | null): Promise<void> {
    this.wrote(`annotate ${key}`, namespace, name);
    await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { metadata: { annotations: { [key]: value } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }

  /** Applies the status of an SvcCluster (the fields this manager set before and omits now are removed). */
  async applyStatus(namespace: string, name: string, status: object): Promise<void> {
    this.wrote('status', namespace, name, JSON.stringify(status));
    await this.custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP, version: VERSION, plural: PLURAL, namespace, name, fieldManager: FIELD_MANAGER, force: true,
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, status },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
    );
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
