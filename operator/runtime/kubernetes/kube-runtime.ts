// The Kubernetes runtime: the members of one SvcCluster are the pods of its StatefulSet (OnDelete updates).
// A restart is "move the template to the new image, delete the pod"; the replacement is awaited by the engine's
// next passes (the member shows as starting), not here. The records are on the SvcCluster itself (kube-records.ts: one
// annotation, status for people), written by the engine before the step they announce is carried out. Every snapshot (onto the backup claim: spec.backup.pvc or
// the operator's <cluster>-backups) and every restore runs as a Job; the operator's --snapshot-dir is only the
// fallback of a runtime built without Jobs (tests that drive the runtime directly).
import { join } from 'node:path';
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { RuntimeError, StepPending, type BackupStep, type RecordStore, type RecoverSnapshotStep, type RuntimeMember, type RuntimeWith, type VerifyStep } from '../runtime.js';
import type { BackupEntry, SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../../api/types.js';
import { combineDrills, judgeDrill, noBackupToVerify, pointEntry, type DrillMeasure } from '../../backup/verify.js';
import { DestinationError, s3Destinations } from '../../backup/destinations/index.js';
import type { RestorePoint } from '../../backup/restore-points.js';
import { dueOfStep } from '../../backup/schedule.js';
import { DEFAULT_VOLUME } from '../../api/maintenance.js';
import { quantityBytes } from '../../api/quantity.js';
import { pruneSnapshotDir, snapshotPath } from '../snapshot-files.js';
import type { AgentObservation, MemberLoss, VolumeObservation, Step, TargetRevision, UpgradeProgress } from '../../planner/types.js';
import type { ClusterRecords, ClusterRequests, RecordsDocument } from '../../planner/records.js';
import { FORCE_ANNOTATION, forcedMember, recoveryJoin } from './kube-recovery.js';
import { clientServiceName, CONFIG_HASH_ANNOTATION, memberClientURL, releaseOf, RESTART_TOKEN_ANNOTATION, selectorLabels, SERVING_LABEL, TLS_HASH_ANNOTATION, type ClusterRef, type LiveShape } from './manifests.js';
import { desiredState, liveStatefulSet, targetRevision, type DesiredState } from './desired.js';
import type { KubeApi } from './kube-api.js';
import type { MemberClient } from '../../members/index.js';
import { dataClaimName, memberOfPeerURLIn, peerURLOf, retireHighestMember, startJoiningMember, type ScalingHost } from './kube-scaling.js';
import { JobFailure, type ClusterJobs } from './backup-job.js';
import { lossInLine, wayOutOfLine } from '../healing.js';

/** A desired state and the inputs it was built from (JSON of the cluster, release and observation). */
export interface DesiredBuild {
  key?: string;
  state?: DesiredState;
}

export interface KubeRuntimeOptions {
  /** The last build, kept by the caller across passes (the controller's session): unchanged inputs are not built again. */
  desired?: DesiredBuild;
  /** Where snapshots are written (a mounted backup PVC in a pod). */
  snapshotDir: string;
  /** The record document of this pass (kube-records.ts), as it stands after each of the engine's writes. */
  records: RecordStore & { current(): RecordsDocument };
  /** Reads the v2 data-size estimate from a member (without it: unknown, treated as small). */
  client?: MemberClient;
  /** Backup and restore Jobs (onto the backup claim; spec.restore). */
  jobs?: ClusterJobs;
  /** Fingerprint of the TLS Secrets (controller/tls.ts), when the cluster has any. */
  tlsHash?: string;
}

/** The message of a member's log line (a JSON line's msg and error), else the line. */
function readable(line: string): string {
  try {
    const j = JSON.parse(line) as { level?: string; msg?: string; error?: string };
    if (typeof j.msg === 'string') return `${j.level === 'error' || j.level === 'fatal' ? `${j.level}: ` : ''}${j.msg}${j.error ? ` (${j.error})` : ''}`;
  } catch {
    // not JSON
  }
  return line;
}

/**
 * The last telling line the svc container of `pod` wrote before it last exited on an error (its termination message:
 * FallbackToLogsOnError), while it is not running again; undefined otherwise.
 */
function lastExitLine(pod: V1Pod): string | undefined {
  const cs = pod.status?.containerStatuses?.find((c) => c.name === 'svc');
  const last = cs?.state?.running ? undefined : cs?.state?.terminated ?? cs?.lastState?.terminated;
  if (!last?.message || last.exitCode === 0) return undefined;
  const lines = last.message.split('\n').map((l) => l.trim()).filter((l) => l !== '').map(readable);
  return ([...lines].reverse().find((l) => /^(error|fatal): /.test(l)) ?? lines.at(-1))?.slice(0, 400);
}

/** Why a pod cannot keep its svc container running, if it cannot (with its own last log line, when it left one). */
function podFailure(pod: V1Pod): string | undefined {
  const cs = pod.status?.containerStatuses?.find((c) => c.name === 'svc');
  if (!cs) return undefined;
  const waiting = cs.state?.waiting;
  if (waiting?.reason === 'CrashLoopBackOff' || (cs.restartCount ?? 0) >= 3) {
    const last = cs.lastState?.terminated;
    const line = lastExitLine(pod);
    const wayOut = line ? wayOutOfLine(line) : undefined;
    return `container restarted ${cs.restartCount ?? 0} times${last ? ` (last exit ${last.exitCode}${last.reason ? ` ${last.reason}` : ''})` : ''}${line ? `; its last log line: ${line}` : ''}${wayOut ? `; ${wayOut}` : ''}`;
  }
  return undefined;
}

/** Evidence in the pod that its member lost its data (a refused start, a corrupt database), if any. */
export function podLoss(pod: V1Pod): MemberLoss | undefined {
  const line = lastExitLine(pod);
  return line === undefined ? undefined : lossInLine(line);
}

/** How long a member's pod may stay unschedulable on a volume bound to a node that does not take it (a removed node) before its member counts as lost. */
export const NODE_LOSS_GRACE_MS = 5 * 60_000;

/**
 * Evidence outside the container that a member's data is gone: its claim is Lost (the volume behind it was deleted),
 * or its pod has been unschedulable for longer than `graceMs` because its volume is bound to a node that does not
 * take it (local volumes of a node that was removed). A node merely down or full shows other reasons: not a loss.
 */
export function volumeLoss(pod: V1Pod | undefined, claim: V1PersistentVolumeClaim | undefined, now: number, graceMs = NODE_LOSS_GRACE_MS): MemberLoss | undefined {
  if (claim?.status?.phase === 'Lost') return { cause: 'VolumeLost', detail: `its claim ${claim.metadata?.name} is Lost: the volume bound to it no longer exists` };
  const unscheduled = pod?.status?.phase === 'Pending' ? pod.status.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False') : undefined;
  if (!unscheduled || !/volume node affinity conflict|didn't match PersistentVolume's node affinity/.test(unscheduled.message ?? '')) return undefined;
  const since = new Date(unscheduled.lastTransitionTime ?? now).getTime();
  if (now - since < graceMs) return undefined;
  return { cause: 'NodeLost', detail: `its pod has been unschedulable for ${Math.round((now - since) / 60_000)} min: ${unscheduled.message} (its volume is bound to a node that does not take it)` };
}

/** The pod's image (of the svc container). */
export function podImage(pod: V1Pod): string | undefined {
  return pod.spec?.containers.find((c) => c.name === 'svc')?.image;
}

/** Runtime of one SvcCluster on Kubernetes. */
/** What the Kubernetes runtime can do (each capability's interface is implemented below, or this does not compile). */
const KUBE_CAPABILITIES = ['scaling', 'healing', 'recovery', 'backups', 'drills', 'hibernation', 'volumes', 'continuous'] as const;

export class KubeRuntime implements RuntimeWith<(typeof KUBE_CAPABILITIES)[number]> {
  readonly kind = 'kubernetes';
  readonly capabilities = KUBE_CAPABILITIES;
  readonly records: RecordStore;
  /** The desired state applied last in this pass (built once; a step that moves the template builds the next). */
  private desired: DesiredState | undefined;
  /** The desired state built last and its inputs (the caller's, kept across passes; else this pass's own). */
  private readonly built: DesiredBuild;

  constructor(private readonly api: KubeApi, private readonly cluster: ClusterRef, private readonly opts: KubeRuntimeOptions) {
    this.records = opts.records;
    this.built = opts.desired ?? {};
  }

  /**
   * The backup agent's Deployment. Read only where the spec asks for continuous backup or the records say one was
   * started (a cluster that never had one costs no read a pass).
   */
  async agent(): Promise<AgentObservation> {
    const started = this.rec().agent?.step === 'startBackupAgent';
    if (this.cluster.spec.backup?.continuous !== true && !started) return { running: false };
    if (!this.opts.jobs) return { running: false };
    return this.opts.jobs.agent(this.rec().hibernated !== undefined);
  }

  async startAgent(): Promise<string> {
    if (!this.opts.jobs) throw new RuntimeError('UNSUPPORTED', 'the backup agent runs as a Deployment of the operator\'s image: this runtime has none');
    return this.opts.jobs.startAgent(this.rec().hibernated !== undefined);
  }

  async stopAgent(): Promise<string> {
    if (!this.opts.jobs) return 'no backup agent';
    return this.opts.jobs.stopAgent();
  }

  /** The records as they stand now (written by the engine before the step that reads them). */
  private rec(): ClusterRecords {
    return this.opts.records.current().records;
  }

  private req(): ClusterRequests {
    return this.opts.records.current().requests;
  }

  async hibernate(members: string[]): Promise<void> {
    // the member count was recorded first: it survives the StatefulSet's 0, and a crash here still wakes every member
    const sts = liveStatefulSet(await this.statefulSet());
    const count = this.rec().hibernated ?? Math.max(sts.replicas ?? 0, members.length);
    await this.applyDesired(sts.release ?? this.cluster.spec.version, { ...this.live(count), hibernated: true });
  }

  async wake(): Promise<void> {
    const count = this.rec().hibernated;
    if (count === undefined) return;
    const sts = liveStatefulSet(await this.statefulSet());
    // the members back first (their claims kept), then the engine clears the record: a crash between wakes again
    await this.applyDesired(sts.release ?? this.cluster.spec.version, { ...this.live(count), hibernated: false });
  }

  /** The observation besides the StatefulSet: the initial cluster of the member that joined last, the TLS fingerprint. */
  private live(replicas: number | undefined): LiveShape {
    // after a recovery began, members that start empty join the survivor (never bootstrap) until a scaling step
    // begun since names its own initial cluster
    const records = this.rec();
    const rec = records.recovery;
    const scaling = records.scaling;
    const scaledSince = scaling !== undefined && (!rec || Date.parse(scaling.startedAt) > rec.startedAt);
    const join = scaledSince ? scaling.join : recoveryJoin(rec) ?? scaling?.join;
    const force = forcedMember(rec);
    // while hibernated the StatefulSet keeps the member count it slept with (running none of them)
    const hib = records.hibernated;
    const restart = this.req().restart;
    return {
      ...(hib !== undefined ? { replicas: hib, hibernated: true } : replicas !== undefined ? { replicas } : {}), ...(join ? { join } : {}), ...(records.formed !== undefined ? { formed: true } : {}), ...(this.opts.tlsHash ? { tlsHash: this.opts.tlsHash } : {}), ...(force ? { force } : {}),
      ...(this.liveStorage !== undefined ? { storage: this.liveStorage } : {}),
      ...(restart ? { restart: restart.token } : {}),
    };
  }

  /** Applies the desired state of the StatefulSet on `release` with `live` (built only when it differs from the last). */
  private async applyDesired(release: string, live: LiveShape): Promise<DesiredState> {
    // the same inputs give the same objects: a build is reused across passes (the session keeps it), so a pass
    // builds at most once, and only when its inputs changed or its step moves the template
    const key = JSON.stringify({ cluster: this.cluster, release, live });
    const built = this.built;
    if (built.key !== key || !built.state) {
      built.key = key;
      built.state = desiredState(this.cluster, release, live);
    }
    this.desired = built.state;
    await this.api.applyAll(this.desired.objects);
    return this.desired;
  }

  private async statefulSet(): Promise<V1StatefulSet | undefined> {
    const sts = await this.api.readStatefulSet(this.cluster.namespace, this.cluster.name);
    // the members' volumes as they are: the desired state keeps them until expandVolumes grows them
    this.liveStorage = liveStatefulSet(sts).storage;
    return sts;
  }

  /** The StatefulSet's claim template size as read last this pass. */
  private liveStorage?: string;

  async volumes(): Promise<VolumeObservation | undefined> {
    const sts = await this.statefulSet();
    const size = liveStatefulSet(sts).storage;
    if (!sts || size === undefined) return undefined;
    // the claims and the class are read only when the spec asks for more (expandVolumes grows the claims before the
    // template, so a template at the spec's size has its claims there too)
    const want = quantityBytes(this.cluster.spec.storage?.size ?? DEFAULT_VOLUME);
    if (want === undefined || want <= (quantityBytes(size) ?? 0)) return { size, claims: {} };
    const claims: Record<string, string> = {};
    let className = this.cluster.spec.storage?.storageClassName;
    for (let i = 0; i < (sts.spec?.replicas ?? 0); i++) {
      const member = `${this.cluster.name}-${i}`;
      const claim = await this.api.readClaim(this.cluster.namespace, dataClaimName(member));
      const req = claim?.spec?.resources?.requests?.storage;
      if (req !== undefined) claims[member] = String(req);
      className ??= claim?.spec?.storageClassName;
    }
    className ??= await this.api.defaultStorageClass();
    const expandable = className !== undefined ? await this.api.classAllowsExpansion(className) : undefined;
    return { size, claims, ...(className !== undefined ? { storageClass: className } : {}), ...(expandable !== undefined ? { expandable } : {}) };
  }

  async expandVolumes(size: string, members: string[]): Promise<void> {
    const want = quantityBytes(size)!;
    for (const m of members) {
      const claim = await this.api.readClaim(this.cluster.namespace, dataClaimName(m));
      if (claim && (quantityBytes(String(claim.spec?.resources?.requests?.storage ?? '0')) ?? 0) < want) await this.api.resizeClaim(this.cluster.namespace, dataClaimName(m), size);
    }
    // a claim template cannot change in place: the StatefulSet is recreated, its pods orphaned and adopted again
    const now = await this.liveTemplate();
    if (!now || (quantityBytes(now.live.storage) ?? 0) >= want) return;
    if (!(await this.api.orphanStatefulSet(this.cluster.namespace, this.cluster.name))) {
      throw new StepPending('StatefulSetOrphaning', `waiting for StatefulSet ${this.cluster.name} to be deleted (its pods orphaned) before it is created again with ${size} volumes`, 1000);
    }
    this.liveStorage = size;
    await this.applyDesired(now.release, { ...now.live, storage: size });
  }

  /** The member pods, by name. */
  async pods(): Promise<Map<string, V1Pod>> {
    const sel = Object.entries(selectorLabels(this.cluster.name)).map(([k, v]) => `${k}=${v}`).join(',');
    const pods = await this.api.listPods(this.cluster.namespace, this.cluster.name, sel);
    return new Map(pods.map((p) => [p.metadata!.name!, p]));
  }

  async members(): Promise<RuntimeMember[]> {
    const sts = await this.statefulSet();
    if (!sts) return [];
    const template = liveStatefulSet(sts).release ?? this.cluster.spec.version;
    const pods = await this.pods();
    // hibernated: the members it slept with, none running (the StatefulSet runs 0 pods)
    const replicas = this.rec().hibernated ?? sts.spec?.replicas ?? this.cluster.spec.replicas;
    const out: RuntimeMember[] = [];
    for (let i = 0; i < replicas; i++) {
      const name = `${this.cluster.name}-${i}`;
      const pod = pods.get(name);
      const running = pod !== undefined && !pod.metadata?.deletionTimestamp && pod.status?.phase === 'Running';
      // a pod being deleted is replaced from the template: its revisions are the template's
      const from = pod && !pod.metadata?.deletionTimestamp ? pod.metadata?.annotations ?? {} : sts.spec?.template.metadata?.annotations ?? {};
      const deleting = pod?.metadata?.deletionTimestamp !== undefined;
      // the container's own words first; for a member that does not run, what became of its volume
      const lost = (pod && !deleting ? podLoss(pod) : undefined) ??
        (running || deleting ? undefined : volumeLoss(pod, await this.api.readClaim(this.cluster.namespace, dataClaimName(name)), Date.now()));
      const revisions = {
        ...(from[CONFIG_HASH_ANNOTATION] ? { configRevision: from[CONFIG_HASH_ANNOTATION] } : {}),
        ...(from[TLS_HASH_ANNOTATION] ? { tlsRevision: from[TLS_HASH_ANNOTATION] } : {}),
        ...(from[RESTART_TOKEN_ANNOTATION] ? { restartToken: from[RESTART_TOKEN_ANNOTATION] } : {}),
      };
      out.push({
        ...revisions,
        name,
        clientURL: memberClientURL(this.cluster, name),
        // a pod being deleted is replaced from the template: that is the release it will next run
        configuredVersion: (pod && !pod.metadata?.deletionTimestamp && releaseOf(pod)) || template,
        running,
        failure: pod ? podFailure(pod) : undefined,
        ...(lost ? { lost } : {}),
        ...(running && pod?.metadata?.annotations?.[FORCE_ANNOTATION] === name ? { forcedNewCluster: true } : {}),
      });
    }
    return out;
  }

  /** The StatefulSet as it is: its release (where the upgrade left it) and its size; undefined without one. */
  private async liveTemplate(): Promise<{ release: string; live: LiveShape } | undefined> {
    const sts = liveStatefulSet(await this.statefulSet());
    return sts.release === undefined ? undefined : { release: sts.release, live: this.live(sts.replicas) };
  }

  /** Keeps the owned objects as the spec says, the StatefulSet's release and size where the steps left them. */
  async prepare(): Promise<void> {
    // pods back in the client Service first (a defragmentation a crash cut short; pods of an operator older than the
    // label), then the Service that selects on it
    await this.restoreServing();
    const now = await this.liveTemplate();
    if (now) await this.applyDesired(now.release, now.live);
  }

  /** Labels every member pod serving again, but the one a defragmentation under way has taken out. */
  private async restoreServing(): Promise<void> {
    const round = this.rec().maintenance?.round;
    const busy = new Set(round && round.finishedAt === undefined ? Object.entries(round.defrags).filter(([, d]) => d.finishedAt === undefined).map(([n]) => n) : []);
    for (const [name, pod] of await this.pods()) {
      if (pod.metadata?.deletionTimestamp || busy.has(name) || pod.metadata?.labels?.[SERVING_LABEL] === 'true') continue;
      await this.api.patchPodLabel(this.cluster.namespace, name, SERVING_LABEL, 'true');
    }
  }

  /**
   * Labels the member's pod out of (or back into) the client Service; out: StepPending until the Service's
   * EndpointSlices no longer list it, so the defragmentation starts only once new clients are sent elsewhere.
   */
  async setServing(member: string, serving: boolean): Promise<void> {
    const pod = (await this.pods()).get(member);
    const want = serving ? 'true' : 'false';
    if (pod && pod.metadata?.labels?.[SERVING_LABEL] !== want) await this.api.patchPodLabel(this.cluster.namespace, member, SERVING_LABEL, want);
    if (serving) return;
    const listed = await this.api.readyEndpointPods(this.cluster.namespace, clientServiceName(this.cluster.name));
    if (listed.has(member)) throw new StepPending('ServiceEndpoints', `waiting for ${member} to leave the endpoints of Service ${clientServiceName(this.cluster.name)} before defragmenting it`, 500);
  }

  async createCluster(spec: SvcClusterSpec): Promise<void> {
    // from a snapshot: the data dirs first (the StatefulSet adopts the claims), then the members
    const jobs = spec.restore ? this.opts.jobs : undefined;
    if (jobs) await jobs.restore(spec.version);
    await this.applyDesired(spec.version, this.live(undefined));
    if (jobs) await jobs.restoreDone();
  }

  async restartMember(name: string, version: string): Promise<void> {
    // The template first: the replacement pod is created from it. After a crash between the two, the
    // pod still shows the old image (or configuration) and the planner asks for this restart again.
    const shape = this.desired?.live ?? (await this.liveTemplate())?.live ?? this.live(undefined);
    // the forced start as the record says now (it was written after this pass's prepare): a restart that ends
    // a recovery's forced start must not carry the flag
    const { force: _was, ...rest } = shape;
    const force = forcedMember(this.rec().recovery);
    const live: LiveShape = { ...rest, ...(force ? { force } : {}) };
    const want = (await this.applyDesired(version, live)).revision;
    const old = (await this.pods()).get(name);
    if (!old || old.metadata?.deletionTimestamp) return;
    const a = old.metadata?.annotations ?? {};
    // (a pod started with --force-new-cluster is restarted without it: the template carries the flag no more)
    const current = releaseOf(old) === version && a[CONFIG_HASH_ANNOTATION] === want.config && (a[TLS_HASH_ANNOTATION] ?? '') === (want.tls ?? '') && a[FORCE_ANNOTATION] === undefined &&
      (a[RESTART_TOKEN_ANNOTATION] ?? '') === (live.restart ?? '');
    if (!current) await this.api.deletePod(this.cluster.namespace, name, this.cluster.name);
  }

  async targetRevision(): Promise<TargetRevision | undefined> {
    const r = this.req().restart;
    return { ...targetRevision(this.cluster, this.live(undefined)), ...(r ? { restart: r } : {}) };
  }

  async takeSnapshot(step: Extract<Step, { kind: 'snapshot' }>, progress: UpgradeProgress): Promise<SnapshotRecord> {
    // the Job's deadline follows the database size the leader reports
    const dbBytes = async () => (await this.opts.client?.status(memberClientURL(this.cluster, step.member)))?.dbSize;
    if (this.opts.jobs) return this.opts.jobs.backup(step.member, step.from, step.to, progress.startedAt, dbBytes);
    if (!this.opts.client) throw new RuntimeError('UNSUPPORTED', 'no member client to take the snapshot with');
    return this.opts.client.snapshot(memberClientURL(this.cluster, step.member), step.member, this.snapshotLocation(step.from, step.to, step.member));
  }

  /** A scheduled or on-demand backup Job, named by the slot or token it answers (a restarted operator finds it). */
  async takeBackup(step: BackupStep): Promise<BackupEntry> {
    if (!this.opts.jobs) throw new RuntimeError('UNSUPPORTED', 'backups run as Jobs: this runtime has none');
    const dbBytes = async () => (await this.opts.client?.status(memberClientURL(this.cluster, step.member)))?.dbSize;
    // the manifest names the release the leader runs (its pod's), as the local runtime's does
    const pod = (await this.pods()).get(step.member);
    const release = (pod && releaseOf(pod)) ?? this.cluster.spec.version;
    return this.opts.jobs.takeBackup(dueOfStep(step).kind, step.member, step.id, new Date(), release, dbBytes);
  }

  /**
   * Restore drill Jobs of the step's backup and of each object-store destination's newest restore point (a corrupt
   * object fails its drill); a Job that could not run its drill is a failed drill, saying why. The Jobs stay until
   * every drill was judged, so that a pass finding one still running does not run the others again.
   */
  async verifyBackup(step: VerifyStep): Promise<VerifiedStatus> {
    const jobs = this.opts.jobs;
    if (!jobs) throw new RuntimeError('UNSUPPORTED', 'restore drills run as Jobs: this runtime has none');
    const drill = async (b: BackupEntry, measure: () => Promise<DrillMeasure>): Promise<VerifiedStatus> => {
      try {
        return judgeDrill(b, await measure(), new Date());
      } catch (e) {
        if (e instanceof JobFailure) return judgeDrill(b, { error: `${e.reason}: ${e.message}` }, new Date());
        throw e;
      }
    };
    const outcomes: VerifiedStatus[] = [];
    const b = step.backup;
    if (b) outcomes.push(await drill(b, () => jobs.verify(b, step.id)));
    const dests = s3Destinations(this.cluster.spec);
    for (const d of dests) {
      let point: RestorePoint | undefined;
      try {
        point = await jobs.newestPoint(d);
      } catch (e) {
        if (!(e instanceof DestinationError)) throw e;
        outcomes.push({ time: new Date().toISOString(), location: d.name, revision: 0, result: 'Failed', message: e.message });
        continue;
      }
      const location = `s3://${d.s3.bucket}/${point?.key ?? ''}`;
      if (!point) outcomes.push({ time: new Date().toISOString(), location, revision: 0, result: 'Failed', message: `destination ${d.name} holds no restore point of ${this.cluster.name} yet: take a backup first` });
      else outcomes.push(await drill(pointEntry(point, location), () => jobs.verifyObject(d, point, step.id)));
    }
    await jobs.verifyDone(step.id, dests.map((d) => d.name));
    return outcomes.length > 0 ? combineDrills(outcomes) : noBackupToVerify(new Date());
  }

  /** The survivor's snapshot: a Job onto the backup claim named by the request (StepPending while it runs). */
  async takeRecoverySnapshot(step: RecoverSnapshotStep): Promise<SnapshotRecord> {
    if (!this.opts.jobs) throw new RuntimeError('UNSUPPORTED', 'the survivor\'s snapshot runs as a Job: this runtime has none');
    const dbBytes = async () => (await this.opts.client?.status(memberClientURL(this.cluster, step.member)))?.dbSize;
    return this.opts.jobs.recoverySnapshot(step.member, step.token, dbBytes);
  }

  /**
   * The template carries --force-new-cluster (and names the survivor) while the record's step is forceNewCluster, and the
   * ConfigMap names the survivor alone as the cluster to join; then the survivor's pod is deleted and comes back
   * forced, on its own claim, under its name and Services. The lost members' pods are left as they are: one that
   * starts empty is refused by the survivor (it is no member); the planner retires them from the top ordinal down.
   */
  async forceNewCluster(survivor: string, lost: string[]): Promise<void> {
    if (forcedMember(this.rec().recovery) !== survivor) {
      throw new RuntimeError('UNSUPPORTED', `the recovery record does not name ${survivor} for the forced start (lost: ${lost.join(', ')}); it is written before this step`);
    }
    const now = await this.liveTemplate();
    await this.applyDesired(now?.release ?? this.cluster.spec.version, this.live(now?.live.replicas));
    const pod = (await this.pods()).get(survivor);
    if (!pod || pod.metadata?.deletionTimestamp) return; // its replacement comes from the forced template
    if (pod.metadata?.annotations?.[FORCE_ANNOTATION] === survivor) return; // started forced already
    await this.api.deletePod(this.cluster.namespace, survivor, this.cluster.name);
  }

  private snapshotDir(): string {
    return join(this.opts.snapshotDir, this.cluster.namespace, this.cluster.name);
  }

  snapshotLocation(from: string, to: string, member: string): string {
    return snapshotPath(this.snapshotDir(), member, from, to);
  }

  async pruneSnapshots(keep: number): Promise<string[]> {
    if (this.opts.jobs) return []; // the backup Job prunes the claim
    return pruneSnapshotDir(this.snapshotDir(), keep).map((f) => join(this.snapshotDir(), f));
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

  /**
   * A fresh volume for member `name`: the ConfigMap first names the running cluster it joins (`join`,
   * INITIAL_CLUSTER_STATE existing; kept in the scaling record, so later passes keep it), then its claim and its pod
   * are deleted. The StatefulSet makes a new claim (it waits while the old one is being deleted) and a new pod, which
   * starts on the empty volume once the engine added it as a learner (before that it exits: not yet a member).
   */
  async resetMember(name: string, join: string[]): Promise<void> {
    const replicas = liveStatefulSet(await this.statefulSet()).replicas ?? this.cluster.spec.replicas;
    await this.scalingHost().applyWith(replicas, join);
    await this.api.deleteClaim(this.cluster.namespace, dataClaimName(name));
    await this.api.deletePod(this.cluster.namespace, name, this.cluster.name);
  }

  /** The StatefulSet recreates the pod of a member reset for its replacement: only its join list is kept applied. */
  async startReplacement(_name: string, join: string[]): Promise<void> {
    const replicas = liveStatefulSet(await this.statefulSet()).replicas ?? this.cluster.spec.replicas;
    await this.scalingHost().applyWith(replicas, join);
  }

  private scalingHost(): ScalingHost {
    return {
      api: this.api,
      cluster: this.cluster,
      applyWith: async (replicas, join) => {
        const now = await this.liveTemplate();
        const live = { ...this.live(replicas), ...(join ? { join } : {}) };
        await this.applyDesired(now?.release ?? this.cluster.spec.version, live);
      },
      podExists: async (name) => (await this.pods()).has(name),
    };
  }

  /** The member's own count of v2 bytes (svc_v2_store_data_bytes on /metrics); unknown when unreadable. */
  async v2DataBytes(member: string): Promise<number | undefined> {
    return this.opts.client?.v2DataBytes(memberClientURL(this.cluster, member)).catch(() => undefined);
  }
}
