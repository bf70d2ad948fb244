// The SvcCluster controller: informers on SvcClusters and the objects they own feed a rate-limited queue of
// "namespace/name" keys, worked by several workers (never two on one cluster). Each reconcile is level-triggered
// and runs one pass of the orchestrator's engine (orchestrator/engine.ts, the same as `local apply`) through the
// Kubernetes runtime: observe -> plan -> record (the annotations) -> act; then the step's Event, status published
// once, and a requeue. What the controller remembers about a cluster lives in its ClusterSession (session.ts).
// Nothing waits inside a reconcile: a restarting pod, a moving leader or a running Job is looked at again on a
// later pass, so one slow cluster never holds up the others.
import * as k8s from '@kubernetes/client-node';
import { Counter, Histogram, Registry } from 'prom-client';
import { API_VERSION, PLURAL, type SvcCluster, type SvcClusterStatus } from '../api/types.js';
import { specProblems, unknownFields, withDefaults } from '../api/validate.js';
import { MemberClient, type MemberClientOptions } from '../members/index.js';
import { envCrash, runPass, type PassResult } from '../orchestrator/engine.js';
import { isAtLeast, KubeApi, type EventTarget, type ReadCache } from '../runtime/kubernetes/kube-api.js';
import { KubeRuntime, podImage } from '../runtime/kubernetes/kube-runtime.js';
import type { KubeRecords } from '../runtime/kubernetes/kube-records.js';
import { ClusterJobs, JobFailure, unsupportedOnKubernetes } from '../runtime/kubernetes/backup-job.js';
import { backupsState, describeBackup, msUntilNext } from '../backup/schedule.js';
import { describeVerified } from '../backup/verify.js';
import type { ClusterRecords } from '../planner/records.js';
import { recoveryRefusal } from '../planner/recovery.js';
import { describeDefrag } from '../planner/maintenance.js';
import type { RecoveryProgress } from '../planner/types.js';
import type { RecoveryStatus } from '../api/types.js';
import { CLUSTER_LABEL, MANAGED_BY, type ClusterRef } from '../runtime/kubernetes/manifests.js';
import { eventReason, isSettled, lookAgainMs, runsJob } from '../planner/steps.js';
import type { ObservedCluster, Step } from '../planner/types.js';
import { UpgradeMetrics } from './metrics.js';
import { WorkQueue, type Requeue } from './queue.js';
import { ClusterSession, Sessions } from './session.js';
import { readClusterTls, TlsSecretError } from './tls.js';
import { readPodProblems, DiagnosticReads } from './pod-diagnostics.js';
import { canonical, computeStatus, continuousBackupEvent, destinationProblem, dropUndefined, errorLine, stoppedStatus, type PodFacts } from './status.js';
import { ScopedInformer } from './scope.js';

const [GROUP, VERSION] = API_VERSION.split('/');
/** How often status.backups.continuousRevision is read from the destination (a LIST and a GET). */
const AGENT_STATUS_MS = 10_000;

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
  /** The operator's own image: every backup and restore runs it as a Job. */
  operatorImage?: string;
  /** How long such a Job may run. Default: from the database size (operator/backup/schedule.ts jobDeadlineSeconds). */
  jobTimeoutSeconds?: number;
  /** Clusters reconciled at once (one worker per cluster at a time). Default 4. */
  workers?: number;
  /** Watch only these namespaces (Roles suffice); default: all. */
  namespaces?: string[];
  /** Reconcile only the SvcClusters this label selector matches; default: all. */
  clusterSelector?: string;
  /** Fault injection: a SVC_OPERATOR_CRASH_AT value (orchestrator/engine.ts envCrash). Default: none. */
  crashAt?: string;
}

/** A line of the JSON log. */
function defaultLog(entry: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

/** The controller. start() begins watching; stop() ends it. */
export class Controller {
  readonly api: KubeApi;
  readonly queue = new WorkQueue();
  readonly registry: Registry;
  private readonly clusters: ScopedInformer<StoredCluster>;
  private readonly owned: Array<k8s.Informer<k8s.KubernetesObject>> = [];
  /** The owned objects' informers as the API wrapper reads them (set on the wrapper once synced). */
  private readonly readCache: ReadCache;
  /** The claims and Warning Events pod diagnostics read, kept a few seconds. */
  private readonly diagnostics: DiagnosticReads;
  // generous timeout: a loaded machine must not read as an unhealthy member (and a status write)
  private readonly clientOptions: MemberClientOptions = { timeoutMs: 5000, attempts: 1 };
  /** The member client of every plain-http cluster (a TLS cluster's own is in its session). */
  private readonly plainClient = new MemberClient(this.clientOptions);
  /** What this process remembers per cluster, dropped in one place when the cluster goes. */
  private readonly sessions = new Sessions((key) => {
    const [namespace, name] = key.split('/');
    this.api.forgetCluster(namespace, name);
    this.upgradeMetrics.forget(namespace, name);
  });
  private readonly log: (entry: Record<string, unknown>) => void;
  private readonly reconciles: Counter;
  private readonly durations: Histogram;
  private readonly upgradeMetrics: UpgradeMetrics;
  private running?: Promise<void>;
  private stopped = false;
  /** True once the informers have listed everything once. */
  synced = false;

  constructor(readonly kc: k8s.KubeConfig, private readonly opts: ControllerOptions) {
    this.api = new KubeApi(kc);
    this.diagnostics = new DiagnosticReads(this.api.core);
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
    const byKind = new Map<string, ScopedInformer<k8s.KubernetesObject>>();
    const watch = <T extends k8s.KubernetesObject>(kind: string, prefix: string, plural: string, list: (ns: string | undefined) => Promise<k8s.KubernetesListObject<T>>) => {
      const inf = new ScopedInformer<T>(kc, opts.namespaces, (ns) => nsPath(prefix, ns, plural), list, MANAGED_BY);
      for (const ev of ['add', 'update', 'delete'] as const) inf.on(ev, enqueueOwner);
      // a deleted object is written again at the next pass, not taken as applied
      inf.on('delete', (o) => this.api.forgetObject(kind, o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
      this.owned.push(inf as unknown as k8s.Informer<k8s.KubernetesObject>);
      byKind.set(kind, inf as unknown as ScopedInformer<k8s.KubernetesObject>);
    };
    const labelSelector = MANAGED_BY;
    watch('Pod', '/api/v1', 'pods', (namespace) => namespace ? this.api.core.listNamespacedPod({ namespace, labelSelector }) : this.api.core.listPodForAllNamespaces({ labelSelector }));
    watch('StatefulSet', '/apis/apps/v1', 'statefulsets', (namespace) => namespace ? this.api.apps.listNamespacedStatefulSet({ namespace, labelSelector }) : this.api.apps.listStatefulSetForAllNamespaces({ labelSelector }));
    watch('Service', '/api/v1', 'services', (namespace) => namespace ? this.api.core.listNamespacedService({ namespace, labelSelector }) : this.api.core.listServiceForAllNamespaces({ labelSelector }));
    watch('ConfigMap', '/api/v1', 'configmaps', (namespace) => namespace ? this.api.core.listNamespacedConfigMap({ namespace, labelSelector }) : this.api.core.listConfigMapForAllNamespaces({ labelSelector }));
    this.readCache = {
      object: (kind, namespace, name) => (kind === 'Pod' ? undefined : byKind.get(kind)?.get(name, namespace)),
      pods: (namespace, cluster) => (byKind.get('Pod')!.list(namespace) as k8s.V1Pod[]).filter((p) => p.metadata?.labels?.[CLUSTER_LABEL] === cluster),
    };
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
    // from now on a pass reads the cluster's objects from the informers (kube-api.ts)
    this.api.cache = this.readCache;
    this.log({ level: 'info', msg: 'informers synced', clusters: this.clusters.list().length });
    this.running = this.queue.run((key) => this.reconcileKey(key), this.opts.workers ?? 4, (key, e) => {
      this.log({ level: 'error', msg: 'reconcile failed', cluster: key, error: (e as Error).message });
    });
  }

  /** Stops watching and working (the step under way finishes first). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.stop();
    await Promise.all([this.clusters, ...this.owned].map((i) => i.stop().catch(() => undefined)));
    await this.running;
    this.sessions.close();
    this.plainClient.close();
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
      await this.reportFailure(key, e);
      throw e;
    } finally {
      end();
    }
  }

  /** One reconcile: load the cluster (its spec checked, its TLS read, its runtime and records), one pass, publish. */
  private async reconcile(key: string): Promise<Requeue> {
    const [namespace, name] = key.split('/');
    const stored = this.clusters.get(name, namespace);
    if (!stored || stored.metadata.deletionTimestamp) {
      this.sessions.drop(key);
      return undefined; // owned objects go with it (owner references); the default backup claim stays
    }
    const session = this.sessions.get(key);
    const loaded = await this.load(session, stored);
    if ('requeue' in loaded) return loaded.requeue;
    const { spec, client, rt, jobs, records, target } = loaded;
    // The engine's pass: observe -> plan -> record -> act. Nothing in it sleeps, and it does not call back here.
    const r = await runPass(rt, spec, client, session.memory, { crash: envCrash(this.opts.crashAt) });
    const began = await this.announce(session, target, spec, r, records.current().requests.recover);
    const { step, observed } = r;
    if (!began) {
      const status = await this.status(session, rt, jobs, spec, stored, observed, step, r.records);
      await this.publish(session, stored, status);
      return this.lookAgain(spec, r, status);
    }
    const error = r.error ? `${step.kind}: ${r.error.message}` : undefined;
    const fresh = this.clusters.get(name, namespace) ?? stored;
    await this.publish(session, fresh, await this.status(session, rt, jobs, spec, fresh, observed, step, r.records, error));
    if (r.pending) return r.pending.retryMs;
    // a step that keeps failing is retried less and less often (each try is two Events)
    session.stepFailures = error ? session.stepFailures + 1 : 0;
    // look again at once: the next step follows from a new observation
    return error ? this.queue.policy.delay(session.stepFailures) : 200;
  }

  /**
   * The cluster as a pass needs it: its spec (refused with InvalidSpec when the checks fail), its member client (a TLS
   * Secret that cannot be used stops it), its runtime over the record document; or when to look again.
   */
  private async load(session: ClusterSession, stored: StoredCluster): Promise<{ requeue: Requeue } | { spec: SvcCluster['spec']; client: MemberClient; rt: KubeRuntime; jobs: ClusterJobs; records: ReturnType<KubeRecords['at']>; target: EventTarget }> {
    const { namespace, name } = stored.metadata as { namespace: string; name: string };
    const spec = withDefaults(stored.spec);
    const target: EventTarget = { namespace, name, uid: stored.metadata.uid! };
    const stop = async (reason: string, message: string, requeue: Requeue) => {
      if (stored.status?.lastError !== message) await this.api.event(target, 'Warning', reason, message);
      await this.publish(session, stored, stoppedStatus(stored.status, stored.metadata.generation, reason, message, new Date()));
      return { requeue };
    };
    // the same checks as `local apply` (the apiserver already dropped unknown fields: belt and braces)
    const problems = [...unknownFields({ spec: stored.spec }), ...specProblems(spec), ...unsupportedOnKubernetes(name, spec)];
    if (problems.length > 0) return stop('InvalidSpec', problems.join('; '), undefined);
    // TLS Secrets first: a missing or unusable one blocks the cluster before anything is applied.
    let client: MemberClient;
    let tlsHash: string | undefined;
    try {
      const tls = await readClusterTls(this.api, namespace, spec);
      client = session.memberClient(tls.client, this.plainClient, this.clientOptions);
      tlsHash = tls.fingerprint;
      this.upgradeMetrics.certificates(namespace, name, tls.expiry);
    } catch (e) {
      if (!(e instanceof TlsSecretError)) throw e;
      return stop(e.reason, e.message, 15_000);
    }
    // the spec as stored: the StatefulSet's live size and release are the runtime's observation (desired.ts)
    const ref: ClusterRef = { name, namespace, uid: target.uid, spec };
    const jobs = new ClusterJobs(this.api, ref, { image: this.opts.operatorImage, timeoutSeconds: this.opts.jobTimeoutSeconds });
    // the record document (one annotation) and the requests (the annotations people write)
    const records = session.recordsOf(this.api).at(stored);
    const rt = new KubeRuntime(this.api, ref, { snapshotDir: this.opts.snapshotDir, records, client, jobs, desired: session.desired, ...(tlsHash ? { tlsHash } : {}) });
    return { spec, client, rt, jobs, records, target };
  }

  /** What a pass says: the step's Event, log line and metrics, a refused recovery; resolves true when the step began. */
  private async announce(session: ClusterSession, target: EventTarget, spec: SvcCluster['spec'], r: PassResult, recoverRequest: string | undefined): Promise<boolean> {
    const { namespace, name } = target;
    const { step, line, progress, observed } = r;
    // a step that reached its act (carried out, under way or failed) is announced by an Event; one under way once
    const began = r.acted || r.pending !== undefined || r.error !== undefined;
    if (began && session.pendingLine !== line) await this.api.event(target, 'Normal', eventReason(step), line);
    if (!runsJob(step)) session.jobFailure = undefined; // no Job is due any more
    const changed = session.lastStep !== line;
    session.lastStep = line;
    if (changed) this.log({ level: 'info', msg: 'step', cluster: session.key, step: step.kind, line });
    this.upgradeMetrics.observe(namespace, name, step, progress);
    this.upgradeMetrics.noSpace(namespace, name, (observed.noSpace?.length ?? 0) > 0);
    if (changed && (step.kind === 'blocked' || (step.kind === 'wait' && (step.code === 'Paused' || step.code === 'Suspended')))) {
      await this.api.event(target, step.kind === 'blocked' ? 'Warning' : 'Normal', eventReason(step), step.reason);
    }
    // a recovery request the planner did not act on (the cluster has quorum...): refused, nothing touched, said once
    const record = r.records.recovery;
    const refused = recoverRequest !== undefined && recoverRequest !== record?.token ? recoveryRefusal(observed, name) : undefined;
    if (refused && session.recoverRefused !== recoverRequest) {
      session.recoverRefused = recoverRequest;
      await this.api.event(target, 'Warning', 'RecoverRefused', `recovery ${recoverRequest} refused: ${refused}`);
    }
    session.recovery = recoveryStatus(recoverRequest, record, refused);
    if (!began) return false;
    session.pendingLine = r.pending ? line : undefined;
    if (r.error) {
      const e = r.error;
      if (e instanceof JobFailure) session.jobFailure = e;
      await this.api.event(target, 'Warning', e instanceof JobFailure ? e.reason : `${eventReason(step)}Failed`, `${step.kind}: ${e.message}`);
      session.lastStep = undefined;
    } else if (r.acted) {
      this.upgradeMetrics.stepDone(namespace, name, step);
      if (spec.restore && step.kind === 'createCluster') await this.api.event(target, 'Normal', 'Restored', `members restored from ${restoredFrom(spec.restore)}`);
      if (r.backup) await this.api.event(target, 'Normal', 'BackupTaken', describeBackup(r.backup));
      if (r.verified) await this.api.event(target, r.verified.result === 'Passed' ? 'Normal' : 'Warning', r.verified.result === 'Passed' ? 'BackupVerified' : 'BackupVerifyFailed', describeVerified(r.verified));
      if (r.done) this.log({ level: 'info', msg: 'done', cluster: session.key, step: step.kind, line: r.done });
      if (r.defrag) {
        await this.api.event(target, 'Normal', 'MemberDefragmented', describeDefrag(r.defrag));
        this.upgradeMetrics.defragmented(namespace, name, r.defrag);
      }
      session.jobFailure = undefined;
    }
    return true;
  }

  /** When to look again at a step planned and not acted on. */
  private lookAgain(spec: SvcCluster['spec'], r: PassResult, status: SvcClusterStatus): Requeue {
    const { step, observed } = r;
    // a steady cluster is looked at again by its next scheduled backup or drill at the latest
    // (continuous backup: by the next read of its progress)
    if (isSettled(step)) return Math.max(200, Math.min(this.opts.resyncMs ?? 30_000, msUntilNext(status.backups, new Date()) ?? Infinity, spec.backup?.continuous ? AGENT_STATUS_MS : Infinity));
    const again = lookAgainMs(step);
    if (again !== undefined) return again;
    // waiting for Kubernetes to run a member's pod: the pod's own changes enqueue the cluster (informer), so the
    // poll only backs that up (hundreds of clusters with Pending pods would otherwise keep the workers busy)
    if (step.kind === 'wait' && observed.members.some((m) => !m.running)) return Math.max(15_000, this.opts.pollMs ?? 2000);
    return this.opts.pollMs ?? 2000;
  }

  private async status(session: ClusterSession, rt: KubeRuntime, jobs: ClusterJobs, spec: SvcCluster['spec'], stored: StoredCluster, observed: ObservedCluster, step: Step, records: ClusterRecords, error?: string): Promise<SvcClusterStatus> {
    const progress = records.progress;
    const pods = new Map<string, PodFacts>();
    const live = await rt.pods();
    for (const [n, p] of live) {
      pods.set(n, { image: podImage(p), ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false });
    }
    // pod-level failures (pod-diagnostics.ts): a Warning Event each time a new one appears
    const podProblems = await readPodProblems(this.diagnostics, stored.metadata.namespace!, stored.metadata.name, [...live.values()], observed.hibernated ? 0 : observed.members.length); // hibernated: no pod is expected
    const current = new Set(podProblems.map((p) => `${p.reason} ${p.object}`));
    for (const p of podProblems) {
      if (!session.podProblemsSeen.has(`${p.reason} ${p.object}`)) await this.api.event({ namespace: stored.metadata.namespace!, name: stored.metadata.name, uid: stored.metadata.uid! }, 'Warning', p.reason, `${p.object}: ${p.message}`);
    }
    session.podProblemsSeen = current;
    const now = new Date();
    if (spec.backup?.continuous && (session.continuous === undefined || now.getTime() - session.continuous.at >= AGENT_STATUS_MS)) {
      // the destination, not the agent's pod: what is durable is what a restore can use
      const progress = await jobs.continuousProgress().catch(() => session.continuous?.status ?? {});
      // the agent's destinations, each checked as it writes to them (ContinuousBackup, a Warning Event when one fails)
      const problems = await jobs.destinationProblems().then((ps) => ps.map(destinationProblem), () => session.continuous?.problems ?? []);
      session.continuous = { at: now.getTime(), status: progress, problems };
    }
    if (!spec.backup?.continuous) session.continuous = undefined;
    const backups = backupsState({ name: stored.metadata.name, spec, previous: records.backups, preUpgrade: progress?.snapshot, created: new Date(stored.metadata.creationTimestamp ?? 0), now });
    // a failed backup Job shows until a Job succeeds or no Job is due any more (a scheduled or on-demand backup
    // is only planned on a steady cluster: its failure never blocks an upgrade)
    const jobFailure = session.jobFailure;
    this.upgradeMetrics.backup(stored.metadata.namespace!, stored.metadata.name, (step.kind === 'snapshot' || step.kind === 'backup') && jobFailure !== undefined);
    this.upgradeMetrics.verified(stored.metadata.namespace!, stored.metadata.name, backups.lastVerified);
    const status = computeStatus({ generation: stored.metadata.generation, name: stored.metadata.name, spec, observed, pods, step, progress, previous: stored.status, error: error ?? jobFailure?.message, now, jobFailure, rollout: records.rollout, podProblems, backups, ...(session.continuous ? { agentDestinations: session.continuous.problems } : {}) });
    const warn = continuousBackupEvent(stored.status, status);
    if (warn) await this.api.event({ namespace: stored.metadata.namespace!, name: stored.metadata.name, uid: stored.metadata.uid! }, warn.type, warn.reason, warn.message);
    if (session.recovery) status.recovery = session.recovery;
    if (session.continuous && status.backups) Object.assign(status.backups, session.continuous.status);
    return status;
  }

  /** A reconcile that threw still tells: status.lastError, Reconciling with reason ReconcileError, a Warning Event once per message. */
  private async reportFailure(key: string, e: unknown): Promise<void> {
    const [namespace, name] = key.split('/');
    const stored = this.clusters.get(name, namespace);
    if (!stored || stored.metadata.deletionTimestamp) return;
    const message = `reconcile failed: ${errorLine(e)}`;
    try {
      if (stored.status?.lastError !== message) await this.api.event({ namespace, name, uid: stored.metadata.uid! }, 'Warning', 'ReconcileError', message);
      await this.publish(this.sessions.get(key), stored, stoppedStatus(stored.status, stored.metadata.generation, 'ReconcileError', message, new Date(), false));
    } catch (e2) {
      this.log({ level: 'error', msg: 'could not publish the failure', cluster: key, error: (e2 as Error).message });
    }
  }

  /**
   * Applies the status when it differs from the stored one. Read-your-writes: while the informer's copy is older
   * than this process's last status write, that write is what is compared with.
   */
  private async publish(session: ClusterSession, stored: StoredCluster, status: SvcClusterStatus): Promise<void> {
    const next = canonical(dropUndefined(status));
    const mine = session.status;
    const stale = mine?.rv !== undefined && !isAtLeast(stored.metadata.resourceVersion, mine.rv);
    if (next === (stale ? mine.canonical : canonical(stored.status ?? {}))) return;
    const rv = await this.api.applyStatus(stored.metadata.namespace!, stored.metadata.name, dropUndefined(status));
    session.status = { canonical: next, rv };
  }
}

/** status.recovery: the record's readable form (the request it answers), or the refusal of a request; undefined without either. */
export function recoveryStatus(request: string | undefined, record: RecoveryProgress | undefined, refused: string | undefined): RecoveryStatus | undefined {
  if (refused !== undefined && request !== undefined) return { request, refused };
  if (!record) return undefined;
  return {
    request: record.token, survivor: record.survivor, step: record.step,
    ...(record.snapshot ? { snapshot: record.snapshot.location } : {}),
    startedAt: new Date(record.startedAt).toISOString(),
    ...(record.finishedAt !== undefined ? { finishedAt: new Date(record.finishedAt).toISOString() } : {}),
  };
}

/** Where a restore came from, as the Restored Event says it. */
function restoredFrom(r: NonNullable<SvcCluster['spec']['restore']>): string {
  if (r.snapshot !== undefined) return r.snapshot;
  const at = r.revision !== undefined ? ` at revision ${r.revision}` : r.time !== undefined ? ` at ${r.time}` : ' (the newest restore point)';
  const s3 = r.source?.s3;
  return `${s3 ? `s3://${s3.bucket}${s3.prefix ? `/${s3.prefix}` : ''}` : `destination ${r.source?.destination}`}${r.source?.cluster ? `, cluster ${r.source.cluster}` : ''}${at}`;
}
