// The SvcCluster controller: informers on SvcClusters and the objects they own feed a rate-limited queue of
// "namespace/name" keys; each reconcile is level-triggered and does at most one planner step:
// observe -> plan -> record (progress annotation + status, an Event) -> act -> publish status.
import * as k8s from '@kubernetes/client-node';
import { Counter, Histogram, Registry } from 'prom-client';
import { API_VERSION, type SvcCluster, type SvcClusterStatus } from '../api/types.js';
import { specProblems, withDefaults } from '../api/validate.js';
import type { MemberClient } from '../members/index.js';
import { observe } from '../orchestrator/observe.js';
import { executeScaling } from '../orchestrator/scale.js';
import { KubeApi, type EventTarget } from '../runtime/kubernetes/kube-api.js';
import { KubeRuntime, podImage, PROGRESS_ANNOTATION } from '../runtime/kubernetes/kube-runtime.js';
import { ClusterJobs, JobFailure, JobWaitAborted } from '../runtime/kubernetes/backup-job.js';
import { nextScaling, parseScaling, SCALING_ANNOTATION, type ScalingRecord } from '../runtime/kubernetes/kube-scaling.js';
import { CLUSTER_LABEL, MANAGED_BY, type ClusterRef } from '../runtime/kubernetes/manifests.js';
import { plan } from '../upgrade/plan.js';
import { beginStep, noteMembersDone, recordSnapshot, settle } from '../upgrade/progress.js';
import { describeStep, isMutating, isScalingStep, type Step, type UpgradeProgress } from '../upgrade/types.js';
import { PLURAL } from './crd.js';
import { UpgradeMetrics } from './metrics.js';
import { WorkQueue, type Requeue } from './queue.js';
import { MemberClients } from './member-clients.js';
import { readClusterTls, TlsSecretError } from './tls.js';
import { canonical, computeStatus, dropUndefined, type PodFacts } from './status.js';
import { ScopedInformer } from './scope.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** A stored SvcCluster (the API's metadata on top of the typed resource). */
type StoredCluster = SvcCluster & { metadata: k8s.V1ObjectMeta & { name: string } };

export interface ControllerOptions {
  /** Where pre-upgrade snapshots are written. */
  snapshotDir: string;
  /** Re-check of a steady cluster. Default 30 s. */
  resyncMs?: number;
  /** Poll while an upgrade or creation is under way. Default 2 s. */
  pollMs?: number;
  /** Structured log lines (JSON objects). Default: one JSON line per entry on stderr. */
  log?: (entry: Record<string, unknown>) => void;
  registry?: Registry;
  /** The operator's own image: backups into spec.backup.pvc and restores run it as a Job. */
  operatorImage?: string;
  /** How long such a Job may run. Default 600 s. */
  jobTimeoutSeconds?: number;
  /** Watch only these namespaces (Roles suffice); default: all. */
  namespaces?: string[];
  /** Reconcile only the SvcClusters this label selector matches; default: all. */
  clusterSelector?: string;
}

/** A line of the JSON log. */
function defaultLog(entry: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

function stepReason(step: Step): string {
  switch (step.kind) {
    case 'createCluster': return 'CreateCluster';
    case 'snapshot': return 'Snapshot';
    case 'moveLeader': return 'MoveLeader';
    case 'restartMember': return 'RestartMember';
    case 'addMember': return 'AddMember';
    case 'startMember': return 'StartMember';
    case 'removeMember': return 'RemoveMember';
    case 'retireMember': return 'RetireMember';
    case 'complete': return 'UpgradeComplete';
    case 'blocked': return step.code;
    case 'wait': return step.code;
    case 'steady': return 'Steady';
  }
}

/** The controller. start() begins watching; stop() ends it. */
export class Controller {
  readonly api: KubeApi;
  readonly queue = new WorkQueue();
  readonly registry: Registry;
  private readonly clusters: ScopedInformer<StoredCluster>;
  private readonly owned: Array<k8s.Informer<k8s.KubernetesObject>> = [];
  // generous timeout: a loaded machine must not read as an unhealthy member (and a status write)
  private readonly clients = new MemberClients({ timeoutMs: 5000, attempts: 1 });
  private readonly lastStep = new Map<string, string>();
  /** Consecutive failures of the step carried out last, per cluster. */
  private readonly stepFailures = new Map<string, number>();
  /** Scaling records written by this process (the informer's copy of the annotation may lag behind). */
  private readonly scalingRecords = new Map<string, ScalingRecord>();
  /** Last backup/restore Job failure per cluster (status shows it until a Job succeeds). */
  private readonly jobFailures = new Map<string, JobFailure>();
  private readonly log: (entry: Record<string, unknown>) => void;
  private readonly reconciles: Counter;
  private readonly durations: Histogram;
  private readonly upgradeMetrics: UpgradeMetrics;
  private running?: Promise<void>;
  private stopped = false;
  /** Ends waits for backup/restore Jobs when the operator stops (the next one observes the Job). */
  private readonly stopping = new AbortController();
  /** True once the informers have listed everything once. */
  synced = false;

  constructor(readonly kc: k8s.KubeConfig, private readonly opts: ControllerOptions) {
    this.api = new KubeApi(kc);
    this.log = opts.log ?? defaultLog;
    this.registry = opts.registry ?? new Registry();
    this.reconciles = new Counter({ name: 'svc_operator_reconcile_total', help: 'Reconciles by result.', labelNames: ['result'], registers: [this.registry] });
    this.durations = new Histogram({ name: 'svc_operator_reconcile_duration_seconds', help: 'Reconcile duration.', registers: [this.registry] });
    this.upgradeMetrics = new UpgradeMetrics(this.registry);
    // the scope (every namespace or listed ones; a cluster label selector): operator/controller/scope.ts
    const nsPath = (prefix: string, ns: string | undefined, plural: string) => `${prefix}${ns ? `/namespaces/${ns}` : ''}/${plural}`;
    this.clusters = new ScopedInformer<StoredCluster>(kc, opts.namespaces, (ns) => nsPath(`/apis/${GROUP}/${VERSION}`, ns, PLURAL), (namespace, labelSelector) => (namespace
      ? this.api.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, labelSelector })
      : this.api.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, labelSelector })) as Promise<k8s.KubernetesListObject<StoredCluster>>, opts.clusterSelector);
    const enqueueSelf = (o: StoredCluster) => this.queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    this.clusters.on('add', enqueueSelf);
    this.clusters.on('update', enqueueSelf);
    this.clusters.on('delete', enqueueSelf);
    const enqueueOwner = (o: k8s.KubernetesObject) => {
      const owner = o.metadata?.labels?.[CLUSTER_LABEL];
      if (owner) this.queue.add(`${o.metadata!.namespace}/${owner}`);
    };
    const watch = <T extends k8s.KubernetesObject>(prefix: string, plural: string, list: (ns: string | undefined) => Promise<k8s.KubernetesListObject<T>>) => {
      const inf = new ScopedInformer<T>(kc, opts.namespaces, (ns) => nsPath(prefix, ns, plural), list, MANAGED_BY);
      for (const ev of ['add', 'update', 'delete'] as const) inf.on(ev, enqueueOwner);
      this.owned.push(inf as unknown as k8s.Informer<k8s.KubernetesObject>);
    };
    const labelSelector = MANAGED_BY;
    watch('/api/v1', 'pods', (namespace) => namespace ? this.api.core.listNamespacedPod({ namespace, labelSelector }) : this.api.core.listPodForAllNamespaces({ labelSelector }));
    watch('/apis/apps/v1', 'statefulsets', (namespace) => namespace ? this.api.apps.listNamespacedStatefulSet({ namespace, labelSelector }) : this.api.apps.listStatefulSetForAllNamespaces({ labelSelector }));
    watch('/api/v1', 'services', (namespace) => namespace ? this.api.core.listNamespacedService({ namespace, labelSelector }) : this.api.core.listServiceForAllNamespaces({ labelSelector }));
    watch('/api/v1', 'configmaps', (namespace) => namespace ? this.api.core.listNamespacedConfigMap({ namespace, labelSelector }) : this.api.core.listConfigMapForAllNamespaces({ labelSelector }));
  }

  /** Starts the informers and the worker. */
  async start(): Promise<void> {
    const all = [this.clusters as unknown as k8s.Informer<k8s.KubernetesObject>, ...this.owned];
    for (const inf of all) {
      // informers stop on errors (a dropped watch): start them again after a pause
      inf.on('error', () => {
        if (!this.stopped) setTimeout(() => { if (!this.stopped) void inf.start().catch(() => undefined); }, 2000).unref();
      });
    }
    await Promise.all(all.map((i) => i.start()));
    this.synced = true;
    this.log({ level: 'info', msg: 'informers synced', clusters: this.clusters.list().length });
    this.running = this.queue.run((key) => this.reconcileKey(key), 1, (key, e) => {
      this.log({ level: 'error', msg: 'reconcile failed', cluster: key, error: (e as Error).message });
    });
  }

  /** Stops watching and working (the step under way finishes first). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.queue.stop();
    await Promise.all([this.clusters, ...this.owned].map((i) => i.stop().catch(() => undefined)));
    await this.running;
    this.clients.close();
  }

  /** Reconciles one key; resolves with when to look again. */
  async reconcileKey(key: string): Promise<Requeue> {
    const end = this.durations.startTimer();
    try {
      const r = await this.reconcile(key);
      this.reconciles.inc({ result: 'ok' });
      return r;
    } catch (e) {
      this.reconciles.inc({ result: 'error' });
      throw e;
    } finally {
      end();
    }
  }

  private async reconcile(key: string): Promise<Requeue> {
    const [namespace, name] = key.split('/');
    const stored = this.clusters.get(name, namespace);
    if (!stored || stored.metadata.deletionTimestamp) {
      this.lastStep.delete(key);
      this.clients.drop(key);
      this.jobFailures.delete(key);
      this.upgradeMetrics.forget(namespace, name);
      this.scalingRecords.delete(key);
      this.stepFailures.delete(key);
      return undefined; // owned objects go with it (owner references)
    }
    const spec = withDefaults(stored.spec);
    const target: EventTarget = { namespace, name, uid: stored.metadata.uid! };
    const problems = specProblems(spec);
    if (problems.length > 0) {
      await this.publish(stored, { ...(stored.status ?? {}), phase: 'Blocked', lastError: problems.join('; '), observedGeneration: stored.metadata.generation });
      return undefined;
    }
    // TLS Secrets first: a missing or unusable one blocks the cluster before anything is applied.
    let client: MemberClient;
    try {
      client = this.clients.get(key, await readClusterTls(this.api, namespace, spec));
    } catch (e) {
      if (!(e instanceof TlsSecretError)) throw e;
      if (stored.status?.lastError !== e.message) await this.api.event(target, 'Warning', e.reason, e.message);
      await this.publish(stored, { ...(stored.status ?? {}), phase: 'Blocked', lastError: e.message, observedGeneration: stored.metadata.generation });
      return 15_000;
    }
    // The StatefulSet keeps its size here: members are added and removed one at a time by the scaling steps
    // (the planner compares spec.replicas with the members).
    const live = await this.api.readStatefulSet(namespace, name);
    const liveReplicas = live?.spec?.replicas;
    const cached = this.scalingRecords.get(key);
    const annotated = parseScaling(stored.metadata.annotations?.[SCALING_ANNOTATION]);
    const scaling = cached && (!annotated || cached.startedAt > annotated.startedAt) ? cached : annotated;
    const ref: ClusterRef = { name, namespace, uid: target.uid, spec: liveReplicas === undefined ? spec : { ...spec, replicas: liveReplicas }, ...(scaling?.join ? { join: scaling.join } : {}) };
    let progress = parseProgress(stored.metadata.annotations?.[PROGRESS_ANNOTATION]);
    const rt = new KubeRuntime(this.api, ref, { snapshotDir: this.opts.snapshotDir, progress, client });
    const jobs = new ClusterJobs(this.api, ref, { image: this.opts.operatorImage, timeoutSeconds: this.opts.jobTimeoutSeconds, signal: this.stopping.signal });

    // Keep the owned objects as the spec says (the StatefulSet's release stays where the upgrade left it).
    const templateVersion = await rt.templateVersion();
    if (templateVersion !== undefined) await rt.apply(templateVersion);

    const { cluster: observed, urls } = await observe(rt, client);
    const noted = noteMembersDone(progress, observed);
    if (noted !== progress) {
      progress = noted;
      await rt.saveProgress(progress);
    }
    const step = plan(spec, observed, progress);
    if (step.kind !== 'snapshot' && step.kind !== 'createCluster') this.jobFailures.delete(key); // no Job is due any more
    const line = describeStep(step);
    const changed = this.lastStep.get(key) !== line;
    this.lastStep.set(key, line);
    if (changed) this.log({ level: 'info', msg: 'step', cluster: key, step: step.kind, line });
    if (step.kind === 'steady') {
      const settled = settle(progress, step.version, Date.now());
      if (settled !== progress) {
        progress = settled;
        await rt.saveProgress(progress);
      }
    }
    this.upgradeMetrics.observe(namespace, name, step, progress);
    if (changed && (step.kind === 'blocked' || (step.kind === 'wait' && step.code === 'Paused'))) {
      await this.api.event(target, step.kind === 'blocked' ? 'Warning' : 'Normal', stepReason(step), step.reason);
    }
    let error: string | undefined;
    if (isMutating(step) || step.kind === 'complete') {
      // Write-ahead: progress and status record the step, an Event announces it, then it is carried out.
      if (isScalingStep(step)) {
        // Write-ahead for scaling too: the record (and the initial cluster a joining member gets) first.
        const rec = nextScaling(scaling, spec.replicas, step, new Date());
        const same = (r: ScalingRecord | undefined) => JSON.stringify({ ...r, startedAt: '' });
        if (same(rec) !== same(scaling)) {
          await this.api.patchClusterAnnotation(namespace, name, SCALING_ANNOTATION, JSON.stringify(rec));
          this.scalingRecords.set(key, rec);
        }
      }
      const before = beginStep(progress, step, Date.now());
      if (before !== progress) {
        progress = before;
        await rt.saveProgress(progress);
      }
      await this.publish(stored, await this.status(rt, spec, stored, observed, step, progress));
      await this.api.event(target, 'Normal', stepReason(step), line);
      try {
        if (isScalingStep(step)) await executeScaling(rt, client, step, urls, observed);
        else progress = await this.execute(rt, step, urls, observed.members, progress, client, jobs);
        this.upgradeMetrics.stepDone(namespace, name, step);
        if (step.kind === 'snapshot') {
          await rt.saveProgress(progress);
          if (!spec.backup?.pvc) await rt.pruneSnapshots(spec.backup?.keep ?? 3); // the backup Job prunes the PVC
        }
        if (spec.restore && step.kind === 'createCluster') await this.api.event(target, 'Normal', 'Restored', `members restored from ${spec.restore.snapshot}`);
        this.jobFailures.delete(key);
      } catch (e) {
        if (e instanceof JobWaitAborted) return undefined; // stopping: the recorded progress and the Job remain
        error = `${step.kind}: ${(e as Error).message}`;
        if (e instanceof JobFailure) this.jobFailures.set(key, e);
        await this.api.event(target, 'Warning', e instanceof JobFailure ? e.reason : `${stepReason(step)}Failed`, error);
        this.lastStep.delete(key);
      }
      // look again at once: the next step follows from a new observation
      const fresh = this.clusters.get(name, namespace) ?? stored;
      await this.publish(fresh, await this.status(rt, spec, fresh, observed, step, progress, error));
      // a step that keeps failing is retried less and less often (each try is two Events)
      const failures = error ? (this.stepFailures.get(key) ?? 0) + 1 : 0;
      if (failures > 0) this.stepFailures.set(key, failures);
      else this.stepFailures.delete(key);
      return error ? Math.min(60_000, this.queue.backoff(key) * 2 ** (failures - 1)) : 200;
    }
    await this.publish(stored, await this.status(rt, spec, stored, observed, step, progress));
    if (step.kind === 'steady') return this.opts.resyncMs ?? 30_000;
    if (step.kind === 'blocked') return 15_000;
    return this.opts.pollMs ?? 2000;
  }

  private async execute(rt: KubeRuntime, step: Step, urls: Map<string, string>, members: Array<{ name: string; id?: string }>, progress: UpgradeProgress | undefined, client: MemberClient, jobs: ClusterJobs): Promise<UpgradeProgress | undefined> {
    switch (step.kind) {
      case 'createCluster':
        // from a snapshot: the data dirs first (the StatefulSet adopts the claims), then the members
        if (jobs.spec.restore) await jobs.restore(step.version);
        await rt.apply(step.version);
        if (jobs.spec.restore) await jobs.restoreDone();
        return progress;
      case 'snapshot': {
        if (jobs.spec.backup?.pvc) return recordSnapshot(progress!, await jobs.backup(step.member, step.from, step.to, progress!.startedAt));
        const rec = await client.snapshot(urls.get(step.member)!, step.member, rt.snapshotLocation(step.from, step.to, step.member));
        return recordSnapshot(progress!, rec);
      }
      case 'moveLeader': {
        const toId = step.toId ?? members.find((m) => m.name === step.to)?.id;
        if (!toId) throw new Error(`no id known for member ${step.to}`);
        await client.moveLeader(urls.get(step.from)!, toId);
        return progress;
      }
      case 'restartMember':
        await rt.restartMember(step.member, step.version);
        return progress;
      default:
        return progress;
    }
  }

  private async status(rt: KubeRuntime, spec: SvcCluster['spec'], stored: StoredCluster, observed: Awaited<ReturnType<typeof observe>>['cluster'], step: Step, progress: UpgradeProgress | undefined, error?: string): Promise<SvcClusterStatus> {
    const pods = new Map<string, PodFacts>();
    for (const [n, p] of await rt.pods()) {
      pods.set(n, { image: podImage(p), ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false });
    }
    const key = `${stored.metadata.namespace}/${stored.metadata.name}`;
    return computeStatus({ generation: stored.metadata.generation, spec, observed, pods, step, progress, previous: stored.status, error: error ?? this.jobFailures.get(key)?.message, now: new Date(), jobFailure: this.jobFailures.get(key) });
  }

  /** Applies the status when it differs from the stored one. */
  private async publish(stored: StoredCluster, status: SvcClusterStatus): Promise<void> {
    const next = dropUndefined(status);
    if (canonical(next) === canonical(stored.status ?? {})) return;
    await this.api.applyStatus(stored.metadata.namespace!, stored.metadata.name, next);
    stored.status = next; // the informer catches up; until then do not write the same again
  }
}

/** The progress recorded in the annotation, if any (a malformed one is ignored: the planner re-observes). */
export function parseProgress(text: string | undefined): UpgradeProgress | undefined {
  if (!text) return undefined;
  try {
    const p = JSON.parse(text) as UpgradeProgress;
    return typeof p.to === 'string' && typeof p.from === 'string' ? p : undefined;
  } catch {
    return undefined;
  }
}
