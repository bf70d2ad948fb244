// What one operator watches: every namespace, or only listed ones (`--namespaces`, the chart's namespace-scoped
// mode, where Roles in those namespaces replace the ClusterRole and cluster-wide lists are not allowed), and
// optionally only the SvcClusters matching a label selector (`--cluster-selector`; cli/kube.ts parses both flags).
// Operators with disjoint namespaces or selectors shard the clusters between them: a cluster outside the scope is
// never in this operator's cache, so it is never reconciled (see docs/kubernetes.md, "Sharding").
import * as k8s from '@kubernetes/client-node';

export interface WatchScope {
  /** Namespaces watched; empty or undefined: all of them. */
  namespaces?: string[];
  /** Label selector of the SvcClusters reconciled (Kubernetes syntax); undefined: all. */
  clusterSelector?: string;
}

function dropManagedFields(o: k8s.KubernetesObject): void {
  if (o.metadata?.managedFields) delete o.metadata.managedFields;
}

type Part<T extends k8s.KubernetesObject> = k8s.Informer<T> & k8s.ObjectCache<T>;

/**
 * One informer per watched namespace (or one for all namespaces), used as one. After an error only the parts
 * that failed are started again.
 */
export class ScopedInformer<T extends k8s.KubernetesObject> implements k8s.Informer<T>, k8s.ObjectCache<T> {
  private readonly parts = new Map<string, Part<T>>();
  private readonly failed = new Set<Part<T>>();
  private started = false;

  /**
   * @param path the watch path for a namespace (undefined: all namespaces)
   * @param list the matching list call, with the same label selector
   */
  constructor(kc: k8s.KubeConfig, namespaces: readonly string[] | undefined, path: (ns?: string) => string,
    list: (ns: string | undefined, labelSelector: string | undefined) => Promise<k8s.KubernetesListObject<T>>, labelSelector?: string) {
    for (const ns of namespaces?.length ? namespaces : [undefined]) {
      const part = k8s.makeInformer<T>(kc, path(ns), () => list(ns, labelSelector), labelSelector);
      // registered first, so it runs before any other handler: the cache holds the object handed to the handlers,
      // and managedFields (server-side apply's record of every field's owner) is often most of an object's size
      part.on('add', dropManagedFields);
      part.on('update', dropManagedFields);
      part.on('error', () => this.failed.add(part));
      this.parts.set(ns ?? '', part);
    }
  }

  on(verb: k8s.ADD | k8s.UPDATE | k8s.DELETE | k8s.CHANGE, cb: k8s.ObjectCallback<T>): void;
  on(verb: k8s.ERROR | k8s.CONNECT, cb: k8s.ErrorCallback): void;
  on(verb: string, cb: (x: never) => void): void {
    for (const p of this.parts.values()) (p.on as (v: string, c: unknown) => void)(verb, cb);
  }

  off(verb: k8s.ADD | k8s.UPDATE | k8s.DELETE | k8s.CHANGE, cb: k8s.ObjectCallback<T>): void;
  off(verb: k8s.ERROR | k8s.CONNECT, cb: k8s.ErrorCallback): void;
  off(verb: string, cb: (x: never) => void): void {
    for (const p of this.parts.values()) (p.off as (v: string, c: unknown) => void)(verb, cb);
  }

  async start(): Promise<void> {
    const todo = this.started ? [...this.failed] : [...this.parts.values()];
    this.started = true;
    this.failed.clear();
    await Promise.all(todo.map((p) => p.start()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.parts.values()].map((p) => p.stop()));
  }

  get(name: string, namespace?: string): T | undefined {
    const all = this.parts.get('');
    if (all) return all.get(name, namespace);
    return namespace === undefined ? undefined : this.parts.get(namespace)?.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    const all = this.parts.get('');
    if (all) return all.list(namespace);
    if (namespace !== undefined) return this.parts.get(namespace)?.list(namespace) ?? [];
    return [...this.parts.values()].flatMap((p) => p.list());
  }
}
