// Every backup (pre-upgrade, scheduled, on-demand), every restore and every restore drill runs as a Job in the cluster's namespace (the
// operator pod cannot mount a per-cluster PVC). The Job runs the operator's own image (`svc-operator backup|restore`,
// operator/cli/backup.ts), which writes its result as JSON to the container's termination message; the operator
// looks at the Job once per reconcile (StepPending while it runs: a requeue, no sleep) and reads the record from
// the pod's status. Job names are derived from recorded facts (the upgrade's start time, the cluster's name), so an
// operator that restarts finds the Job it started and observes it instead of starting another.
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { BackupEntry, BackupKind, BackupsStatus, SnapshotRecord, SvcClusterSpec } from '../../api/types.js';
import type { RestorePoint, SegmentRef } from '../../backup/restore-points.js';
import { agentDeployment, agentName, agentReplicas } from './backup-agent.js';
import { quantityBytes } from '../../api/quantity.js';
import { backupClaimName, backupFileFor, jobDeadlineSeconds } from '../../backup/schedule.js';
import type { BackupRecord, JobError, RestoreRecord, VerifyRecord } from '../../api/job-records.js';
import {
  checkDestinations, DestinationError, destinationSecrets, JOB_SECRETS_MOUNT, listRestorePoints, listSegments, openS3, readSegment, pickRestore, RestoreSourceError, restoreDestination, s3Destinations, secretEnvName,
  type DestinationCause, type NamedS3, type PickedRestore,
} from '../../backup/destinations/index.js';
import { kubeDestinationAccess } from './destination-access.js';
import type { DrillMeasure } from '../../backup/verify.js';
import { StepPending } from '../runtime.js';
import { isStatus, type KubeApi } from './kube-api.js';
import { CLUSTER_LABEL, CONTAINER_SECURITY, HASH_ANNOTATION, POD_SECURITY, configMapName, memberClientURL, ownedObjects, type ClusterRef, type KubeObject } from './manifests.js';
import type { AgentObservation } from '../../planner/types.js';

/** Where the backup PVC is mounted in the Jobs. */
export const BACKUP_MOUNT = '/backups';
/** The file the Jobs write their record to (the kubelet's default terminationMessagePath). */
export const TERMINATION_LOG = '/dev/termination-log';
/** Where a drill Job's scratch member lives (an emptyDir: the root filesystem is read-only). */
const SCRATCH_MOUNT = '/scratch';
/** Where a TLS cluster's client Secret is mounted in a backup Job. */
const CLIENT_TLS_MOUNT = '/etc/svc/client-tls';
/** Label of the Jobs: which operation. */
export const JOB_KIND_LABEL = 'svc.dev/job';

/** Typed reasons of backup and restore failures (Event reasons, condition reasons). */
export type JobFailureReason =
  | 'OperatorImageUnknown'
  | 'BackupPVCNotFound'
  | 'BackupJobFailed'
  | 'BackupJobTimeout'
  | 'RestoreSnapshotInvalid'
  | 'RestoreJobFailed'
  | 'RestoreJobTimeout'
  | 'VerifyJobFailed'
  | 'VerifyJobTimeout'
  /** spec.restore asks for a revision or time the destination's backups do not cover (the message gives the range). */
  | 'RestoreNotCovered'
  /** An object-store destination failed, as the local runtime classifies it (DestinationUnreachable, DestinationCredentialsRefused...). */
  | `Destination${DestinationCause}`;

/** A backup or restore that did not succeed; `reason` says why in one word. */
export class JobFailure extends Error {
  constructor(readonly reason: JobFailureReason, message: string) {
    super(message);
    this.name = 'JobFailure';
  }
}

export interface ClusterJobsOptions {
  /** The operator's own image (the Jobs run it); undefined: backups and restores are refused. */
  image?: string;
  /** How long a Job may run (its activeDeadlineSeconds); default: from the database size (jobDeadlineSeconds). */
  timeoutSeconds?: number;
  /** When to look at a running Job again. Default 1000 ms. */
  pollMs?: number;
}

/** A DNS-1123 label from `base` and a suffix, at most 63 characters. */
function jobName(base: string, suffix: string): string {
  return `${base.slice(0, 63 - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}

/** The drill Job of slot or request `id`: the claim's backup, or (`destination`) that destination's newest point. */
function verifyJobName(cluster: string, id: string, destination?: string): string {
  return jobName(cluster, `verify-${createHash('sha256').update(destination === undefined ? id : `${id}\n${destination}`).digest('hex').slice(0, 10)}`);
}

/**
 * What of the spec the Kubernetes runtime does not carry out yet, each with the way out. Refused as InvalidSpec
 * rather than silently skipped: a user relying on a copy must know there is none.
 */
export function unsupportedOnKubernetes(name: string, spec: SvcClusterSpec): string[] {
  const p: string[] = [];
  for (const d of spec.backup?.destinations ?? []) {
    if (d.pvc && d.pvc !== backupClaimName(name, spec)) p.push(`spec.backup.destinations[${d.name}].pvc: backups go to one claim (${backupClaimName(name, spec)}) in this release; name ${d.pvc} in spec.backup.pvc instead`);
  }
  if (spec.backup?.credentialsSecret) p.push('spec.backup.credentialsSecret: backups of a cluster with authentication on are taken by the local runtime only in this release; give the operator client certificates (spec.tls.clientSecret) instead');
  return p;
}

/**
 * The claim and the path inside it that spec.restore.snapshot names: "pvc://<claim>/<path>" (a location as
 * status.backups.items[] shows it, any claim of the namespace) or a bare path inside `ownClaim`.
 */
export function restoreSource(snapshot: string, ownClaim: string): { claim: string; path: string } {
  let claim = ownClaim;
  let rel = snapshot;
  if (snapshot.startsWith('pvc://')) {
    const rest = snapshot.slice('pvc://'.length);
    const slash = rest.indexOf('/');
    claim = slash > 0 ? rest.slice(0, slash) : '';
    rel = slash > 0 ? rest.slice(slash + 1) : '';
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(claim)) throw new JobFailure('RestoreSnapshotInvalid', `spec.restore.snapshot ${snapshot}: "${claim}" is not a claim name (pvc://<claim>/<path>)`);
  }
  if (rel === '' || rel.startsWith('/') || rel.split('/').some((s) => s === '..' || s === '')) {
    throw new JobFailure('RestoreSnapshotInvalid', `spec.restore.snapshot must be pvc://<claim>/<path> (a location of status.backups.items) or a relative path inside the backup claim ${ownClaim}, not ${snapshot}`);
  }
  return { claim, path: rel };
}

/** The pre-upgrade snapshot's file name; deterministic for one upgrade so a re-run Job writes the same file. */
export function backupFileName(member: string, from: string, to: string, startedAt: number): string {
  return `${member}-${from}-to-${to}-${new Date(startedAt).toISOString().replace(/[:.]/g, '-')}.db`;
}

/** What the StatefulSet needs of its members, read from the manifests the operator applies (one source). */
interface MemberLayout {
  /** Claim template of the data volume: its name (claims are <name>-<pod>) and spec. */
  claimTemplate: string;
  claimSpec: Record<string, unknown>;
  /** Mount path of the data volume and the data dir below it. */
  dataMount: string;
  dataDir: string;
  initialCluster: string;
  token: string;
}

function memberLayout(c: ClusterRef, version: string): MemberLayout {
  const objs = ownedObjects(c, version);
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMapName(c.name)) as KubeObject & { data: Record<string, string> };
  const sts = objs.find((o) => o.kind === 'StatefulSet') as KubeObject & {
    spec: { volumeClaimTemplates: Array<{ metadata: { name: string }; spec: Record<string, unknown> }>; template: { spec: { containers: Array<{ name: string; args: string[]; volumeMounts: Array<{ name: string; mountPath: string }> }> } } };
  };
  const tmpl = sts.spec.volumeClaimTemplates[0];
  const container = sts.spec.template.spec.containers.find((x) => x.name === 'svc')!;
  const dataMount = container.volumeMounts.find((m) => m.name === tmpl.metadata.name)!.mountPath;
  const dataDir = container.args.find((a) => a.startsWith('--data-dir='))!.slice('--data-dir='.length);
  return { claimTemplate: tmpl.metadata.name, claimSpec: tmpl.spec, dataMount, dataDir, initialCluster: cm.data.INITIAL_CLUSTER, token: cm.data.INITIAL_CLUSTER_TOKEN };
}

/** Backup and restore Jobs of one SvcCluster. */
export class ClusterJobs {
  constructor(private readonly api: KubeApi, private readonly cluster: ClusterRef, private readonly opts: ClusterJobsOptions) {}

  /** The cluster's spec (with defaults). */
  get spec(): ClusterRef['spec'] { return this.cluster.spec; }

  /** The claim backups go to (spec.backup.pvc or `<cluster>-backups`). */
  get claim(): string { return backupClaimName(this.cluster.name, this.cluster.spec); }

  /** activeDeadlineSeconds of a Job over `bytes` of database (the explicit option wins). */
  private deadline(bytes: number | undefined): number { return this.opts.timeoutSeconds ?? jobDeadlineSeconds(bytes); }

  private labels(kind: string): Record<string, string> {
    return { 'app.kubernetes.io/name': 'svc-operator-job', 'app.kubernetes.io/managed-by': 'svc-operator', [CLUSTER_LABEL]: this.cluster.name, [JOB_KIND_LABEL]: kind };
  }

  private owner(): object {
    return { apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', name: this.cluster.name, uid: this.cluster.uid, controller: true, blockOwnerDeletion: true };
  }

  private image(): string {
    if (!this.opts.image) throw new JobFailure('OperatorImageUnknown', 'the operator does not know its own image (set SVC_OPERATOR_IMAGE or --operator-image): every backup and restore runs it as a Job');
    return this.opts.image;
  }

  private async requireClaim(claim: string, what = 'spec.backup.pvc'): Promise<void> {
    try {
      await this.api.core.readNamespacedPersistentVolumeClaim({ namespace: this.cluster.namespace, name: claim });
    } catch (e) {
      if (isStatus(e, 404)) throw new JobFailure('BackupPVCNotFound', `${what}: PersistentVolumeClaim ${this.cluster.namespace}/${claim} not found`);
      throw e;
    }
  }

  /** The claim the operator creates when spec.backup.pvc is not set (not owned: it outlives the cluster unless asked). */
  backupClaim(): KubeObject {
    const b = this.cluster.spec.backup ?? {};
    const storageClassName = b.storageClassName ?? this.cluster.spec.storage?.storageClassName;
    return {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: {
        name: this.claim, namespace: this.cluster.namespace,
        labels: { 'app.kubernetes.io/name': 'svc-backups', 'app.kubernetes.io/instance': this.cluster.name, 'app.kubernetes.io/managed-by': 'svc-operator', [CLUSTER_LABEL]: this.cluster.name },
        ...(b.deleteWithCluster ? { ownerReferences: [{ ...(this.owner() as k8s.V1OwnerReference), controller: false }] } : {}),
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: b.size ?? this.cluster.spec.storage?.size ?? '1Gi' } },
        ...(storageClassName ? { storageClassName } : {}),
      },
    } as KubeObject;
  }

  /** The backup claim exists: spec.backup.pvc must; the default one is created when missing (never changed after). */
  async ensureClaim(): Promise<void> {
    if (this.cluster.spec.backup?.pvc) return this.requireClaim(this.cluster.spec.backup.pvc);
    try {
      await this.api.core.readNamespacedPersistentVolumeClaim({ namespace: this.cluster.namespace, name: this.claim });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
      await this.api.createClaim(this.cluster.namespace, this.backupClaim() as k8s.V1PersistentVolumeClaim);
    }
  }

  private job(name: string, kind: string, args: string[], volumes: object[], mounts: object[], deadlineSeconds: number, env: k8s.V1EnvVar[] = []): V1Job {
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: this.cluster.namespace, labels: this.labels(kind), ownerReferences: [this.owner() as k8s.V1OwnerReference] },
      spec: {
        // one attempt: retrying is the operator's decision, after it reported the failure
        backoffLimit: 0,
        activeDeadlineSeconds: deadlineSeconds,
        ttlSecondsAfterFinished: 86_400,
        template: {
          metadata: { labels: this.labels(kind) },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            securityContext: POD_SECURITY,
            containers: [{
              name: kind,
              image: this.image(),
              command: ['svc-operator'],
              args,
              terminationMessagePath: TERMINATION_LOG,
              terminationMessagePolicy: 'FallbackToLogsOnError',
              volumeMounts: mounts as k8s.V1VolumeMount[],
              ...(env.length > 0 ? { env } : {}),
              securityContext: CONTAINER_SECURITY,
            }],
            volumes: volumes as k8s.V1Volume[],
            ...(this.cluster.spec.podTemplate?.nodeSelector ? { nodeSelector: this.cluster.spec.podTemplate.nodeSelector } : {}),
            ...(this.cluster.spec.podTemplate?.tolerations ? { tolerations: this.cluster.spec.podTemplate.tolerations as k8s.V1Toleration[] } : {}),
            ...(this.cluster.spec.image?.pullSecrets ? { imagePullSecrets: this.cluster.spec.image.pullSecrets.map((n) => ({ name: n })) } : {}),
          },
        },
      },
    };
  }

  private async readJob(name: string): Promise<V1Job | undefined> {
    try {
      return await this.api.batch.readNamespacedJob({ namespace: this.cluster.namespace, name });
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  /** Deletes a Job and its pod (a finished Job's record is in the SvcCluster by then). */
  async deleteJob(name: string): Promise<void> {
    await this.api.deleteJob(this.cluster.namespace, name);
  }

  /** The termination message of the Job's pod, if it has one. */
  private async podMessage(job: V1Job): Promise<string | undefined> {
    // by the Job's uid: pods of an earlier Job of the same name may still be around
    const pods = (await this.api.core.listNamespacedPod({ namespace: this.cluster.namespace, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid ?? ''}` })).items;
    const finished = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.terminated;
    const pod = pods.filter((p) => finished(p)).sort((a, b) => String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')))[0];
    return pod ? finished(pod)?.message : undefined;
  }

  /**
   * Runs (or, after a restart, finds) the Job `name` and looks at it once: resolves with its record when it
   * finished, rejects with a JobFailure when it failed (the Job is deleted so that a later attempt starts a
   * fresh one), with StepPending while it runs (the reconcile requeues instead of waiting).
   */
  private async run<T>(name: string, build: () => V1Job | Promise<V1Job>, failed: JobFailureReason, timedOut: JobFailureReason): Promise<{ record: T; job: V1Job }> {
    let job = await this.readJob(name);
    if (!job) {
      const body = await build();
      job = await this.api.createJob(this.cluster.namespace, body);
    }
    const conds = job.status?.conditions ?? [];
    const done = conds.some((c) => c.type === 'Complete' && c.status === 'True');
    const fail = conds.find((c) => c.type === 'Failed' && c.status === 'True');
    if (done || fail) {
      const message = await this.podMessage(job);
      let record: (T & Partial<JobError>) | undefined;
      try {
        record = message ? JSON.parse(message) as T & Partial<JobError> : undefined;
      } catch {
        record = undefined;
      }
      if (done && record && record.error === undefined) return { record, job };
      await this.deleteJob(name);
      const why = record?.error ?? message?.trim().split('\n').slice(-3).join(' ') ?? `${fail?.reason ?? 'no record'}${fail?.message ? `: ${fail.message}` : ''}`;
      const reason = fail?.reason === 'DeadlineExceeded' ? timedOut : record?.cause ? `Destination${record.cause as DestinationCause}` as const : failed;
      throw new JobFailure(reason, `Job ${this.cluster.namespace}/${name} failed: ${why}`);
    }
    // the Job's own age, so that a restarted operator keeps the same deadline (the Job has activeDeadlineSeconds too)
    const created = job.metadata?.creationTimestamp ? new Date(job.metadata.creationTimestamp).getTime() : Date.now();
    const deadline = job.spec?.activeDeadlineSeconds ?? this.deadline(undefined);
    if (Date.now() > created + (deadline + 60) * 1000) {
      await this.deleteJob(name);
      throw new JobFailure(timedOut, `Job ${this.cluster.namespace}/${name} did not finish within ${deadline} s`);
    }
    throw new StepPending(failed === 'BackupJobFailed' ? 'BackupRunning' : failed === 'VerifyJobFailed' ? 'VerifyRunning' : 'RestoreRunning', `Job ${this.cluster.namespace}/${name} is running`, this.opts.pollMs ?? 1000);
  }

  /** Snapshot of `member` (the leader) onto the backup claim before from -> to; the upgrade's start time names it. */
  async backup(member: string, from: string, to: string, startedAt: number, dbBytes?: () => Promise<number | undefined>): Promise<SnapshotRecord> {
    return this.runBackup(member, backupFileName(member, from, to, startedAt), `backup-${startedAt.toString(36)}`, dbBytes, { kind: 'pre-upgrade', release: from });
  }

  /**
   * A scheduled (named by its slot) or on-demand (named by its request token) backup of `member`. The Job's name
   * comes from that fact, so a restarted operator finds the Job it started; the file name is in the Job's args.
   */
  async takeBackup(kind: 'scheduled' | 'on-demand', member: string, id: string, now: Date, release: string, dbBytes?: () => Promise<number | undefined>): Promise<BackupEntry> {
    const suffix = `${kind === 'scheduled' ? 'sched' : 'req'}-${createHash('sha256').update(id).digest('hex').slice(0, 10)}`;
    // a scheduled backup's file is named by its slot: taken again after a crash before it was recorded, it replaces
    // the same file instead of leaving one the record does not know
    const rec = await this.runBackup(member, backupFileFor(kind, member, kind === 'scheduled' ? new Date(id) : now), suffix, dbBytes, { kind, release });
    return { ...rec, kind };
  }

  /** The survivor's snapshot before a quorum-loss recovery, named by the request token (a restarted operator finds the Job). */
  async recoverySnapshot(member: string, token: string, dbBytes?: () => Promise<number | undefined>): Promise<SnapshotRecord> {
    const hash = createHash('sha256').update(token).digest('hex').slice(0, 10);
    return this.runBackup(member, `${member}-recover-${hash}.db`, `recover-${hash}`, dbBytes);
  }

  /**
   * The Secrets a Job's destinations need, as its environment (credentials) and mounted volumes (CA bundles); each
   * checked first, so that a Secret or key that is not there is a DestinationNoCredentials failure naming it, before
   * a Job is created (its pod would only wait, unstartable, for the deadline).
   */
  private async destinationSecrets(dests: readonly NamedS3[]): Promise<{ env: k8s.V1EnvVar[]; volumes: object[]; mounts: object[] }> {
    const access = await kubeDestinationAccess(this.api.core, this.cluster.namespace, dests.map((d) => d.s3));
    const env = new Map<string, k8s.V1EnvVar>();
    const cas = new Set<string>();
    for (const d of dests) {
      try {
        openS3(d.name, d.s3, access).store.close();
      } catch (e) {
        if (e instanceof DestinationError) throw new JobFailure(`Destination${e.reason}`, e.message);
        throw e;
      }
      const need = destinationSecrets(d.s3);
      for (const v of need.env) env.set(secretEnvName(v.secret, v.key), { name: secretEnvName(v.secret, v.key), valueFrom: { secretKeyRef: { name: v.secret, key: v.key, optional: v.optional } } });
      for (const m of need.mounts) cas.add(m);
    }
    const ca = [...cas];
    return {
      env: [...env.values()],
      volumes: ca.map((secret, i) => ({ name: `ca-${i}`, secret: { secretName: secret, items: [{ key: 'ca.crt', path: 'ca.crt' }] } })),
      mounts: ca.map((secret, i) => ({ name: `ca-${i}`, mountPath: `${JOB_SECRETS_MOUNT}/${secret}`, readOnly: true })),
    };
  }

  /**
   * A snapshot Job onto the claim; with `upload` (a backup, not the survivor's snapshot of a recovery) the same Job
   * then uploads it to every object-store destination of the spec with its manifest and applies retention there.
   */
  private async runBackup(member: string, fileName: string, suffix: string, dbBytes?: () => Promise<number | undefined>, upload?: { kind: BackupKind; release: string }): Promise<SnapshotRecord> {
    const claim = this.claim;
    this.image();
    const dests = upload ? s3Destinations(this.cluster.spec) : [];
    await this.ensureClaim();
    const name = jobName(this.cluster.name, suffix);
    const dir = `${this.cluster.namespace}/${this.cluster.name}`;
    const keep = this.cluster.spec.backup?.keep ?? 3;
    const volumes: object[] = [{ name: 'backups', persistentVolumeClaim: { claimName: claim } }];
    const mounts: object[] = [{ name: 'backups', mountPath: BACKUP_MOUNT }];
    const maxAge = this.cluster.spec.backup?.maxAge;
    const uploadArgs = upload && dests.length > 0
      ? [`--s3=${JSON.stringify(dests)}`, `--cluster=${this.cluster.name}`, `--release=${upload.release}`, `--kind=${upload.kind}`, ...(maxAge ? [`--max-age=${maxAge}`] : [])]
      : [];
    const tlsArgs: string[] = [];
    const clientSecret = this.cluster.spec.tls?.clientSecret;
    if (clientSecret) {
      // a TLS cluster: the Job presents the same client certificate the operator uses
      volumes.push({ name: 'client-tls', secret: { secretName: clientSecret } });
      mounts.push({ name: 'client-tls', mountPath: CLIENT_TLS_MOUNT, readOnly: true });
      tlsArgs.push(`--cacert=${CLIENT_TLS_MOUNT}/ca.crt`, `--cert=${CLIENT_TLS_MOUNT}/tls.crt`, `--key=${CLIENT_TLS_MOUNT}/tls.key`);
    }
    // the Secrets are read when the Job is made, not on each look at a running one
    const { record: rec, job } = await this.run<BackupRecord>(name, async () => {
      const secrets = await this.destinationSecrets(dests);
      return this.job(name, 'backup', [
        'backup', `--endpoint=${memberClientURL(this.cluster, member)}`, `--member=${member}`,
        `--dir=${BACKUP_MOUNT}/${dir}`, `--file=${fileName}`, `--keep=${keep}`, `--record=${TERMINATION_LOG}`, ...tlsArgs, ...uploadArgs,
      ], [...volumes, ...secrets.volumes], [...mounts, ...secrets.mounts], this.deadline(await dbBytes?.().catch(() => undefined)), secrets.env);
    }, 'BackupJobFailed', 'BackupJobTimeout');
    // the record must be the one this Job was asked for (a Job found after a restart may have been started for
    // the member that led then), and well-formed
    const asked = (flag: string) => job.spec?.template.spec?.containers[0].args?.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);
    if (rec.file !== asked('file') || rec.member !== asked('member') || !/^[0-9a-f]{64}$/.test(String(rec.sha256)) || !(rec.size > 0) || !Number.isInteger(rec.revision)) {
      await this.deleteJob(name);
      throw new JobFailure('BackupJobFailed', `Job ${this.cluster.namespace}/${name} reported an unexpected record: ${JSON.stringify(rec).slice(0, 300)}`);
    }
    await this.deleteJob(name);
    const kv = Number.isInteger(rec.kvHash) && Number.isInteger(rec.compactRevision) ? { kvHash: rec.kvHash!, compactRevision: rec.compactRevision! } : {};
    return { location: `pvc://${claim}/${dir}/${rec.file}`, member: rec.member, revision: rec.revision, size: rec.size, sha256: rec.sha256, time: rec.time, ...kv };
  }

  /**
   * A restore drill of `backup` (a file on a claim of the namespace), named by the slot or request it answers (a
   * restarted operator finds the Job): the Job restores it into a scratch member in an emptyDir and reports the KV
   * hash at its revision. StepPending while it runs; a JobFailure when the Job itself failed.
   */
  async verify(backup: BackupEntry, id: string): Promise<DrillMeasure> {
    const { claim, path: rel } = restoreSource(backup.location, this.claim);
    this.image();
    const name = verifyJobName(this.cluster.name, id);
    const volumes: object[] = [{ name: 'backups', persistentVolumeClaim: { claimName: claim, readOnly: true } }, { name: 'scratch', emptyDir: {} }];
    const mounts: object[] = [{ name: 'backups', mountPath: BACKUP_MOUNT, readOnly: true }, { name: 'scratch', mountPath: SCRATCH_MOUNT }];
    const { record: rec } = await this.run<VerifyRecord>(name, () => this.job(name, 'verify', [
      'verify', `--snapshot=${BACKUP_MOUNT}/${rel}`, `--revision=${backup.revision}`, `--scratch=${SCRATCH_MOUNT}/drill`, `--record=${TERMINATION_LOG}`,
    ], volumes, mounts, this.deadline(backup.size)), 'VerifyJobFailed', 'VerifyJobTimeout');
    if (rec.revision !== backup.revision) throw new JobFailure('VerifyJobFailed', `Job ${this.cluster.namespace}/${name} reported an unexpected record: ${JSON.stringify(rec).slice(0, 300)}`);
    return rec.failure !== undefined ? { error: rec.failure } : { hash: rec.hash, compactRevision: rec.compactRevision };
  }

  /** The newest restore point of this cluster in a destination (listed with the namespace's Secrets), if any. */
  async newestPoint(source: NamedS3): Promise<RestorePoint | undefined> {
    const dest = openS3(source.name, source.s3, await kubeDestinationAccess(this.api.core, this.cluster.namespace, [source.s3]), source.field);
    try {
      return (await listRestorePoints(dest, this.cluster.name)).points.at(-1);
    } finally {
      dest.store.close();
    }
  }

  /**
   * A restore drill of a destination's restore point (a Job of its own per destination, with the destination's
   * Secrets): the Job downloads the object, checks it against its manifest, restores it into a scratch member and
   * reports the KV hash at its revision. StepPending while it runs; a JobFailure when the Job itself failed.
   */
  async verifyObject(source: NamedS3, point: RestorePoint, id: string): Promise<DrillMeasure> {
    this.image();
    const name = verifyJobName(this.cluster.name, id, source.name);
    const { record: rec } = await this.run<VerifyRecord>(name, async () => {
      const secrets = await this.destinationSecrets([source]);
      return this.job(name, 'verify', [
        'verify', `--s3=${JSON.stringify(source)}`, `--object=${point.manifestKey}`, `--download=${SCRATCH_MOUNT}/download`,
        `--revision=${point.revision}`, `--scratch=${SCRATCH_MOUNT}/drill`, `--record=${TERMINATION_LOG}`,
      ], [{ name: 'scratch', emptyDir: {} }, ...secrets.volumes], [{ name: 'scratch', mountPath: SCRATCH_MOUNT }, ...secrets.mounts], this.deadline(point.size), secrets.env);
    }, 'VerifyJobFailed', 'VerifyJobTimeout');
    if (rec.revision !== point.revision) {
      // a newer point landed since the Job started: it is the one to drill
      await this.deleteJob(name);
      throw new StepPending('VerifyRunning', `a newer restore point (revision ${point.revision}) landed in ${source.name}; drilling it`, this.opts.pollMs ?? 1000);
    }
    return rec.failure !== undefined ? { error: rec.failure } : { hash: rec.hash, compactRevision: rec.compactRevision };
  }

  /** Removes the drill Jobs of `id` (the claim's and each destination's), once every one of them was judged. */
  async verifyDone(id: string, destinations: readonly string[]): Promise<void> {
    for (const n of [undefined, ...destinations]) await this.deleteJob(verifyJobName(this.cluster.name, id, n));
  }

  /** The agent's Deployment as it is (its applied hash) and as it should be (none: continuous backup is off). */
  async agent(hibernated: boolean): Promise<AgentObservation> {
    const live = await this.api.readDeployment(this.cluster.namespace, agentName(this.cluster.name));
    const replicas = agentReplicas(this.cluster.spec, hibernated);
    const current = live?.metadata?.annotations?.[HASH_ANNOTATION];
    // (without the operator's image the start fails, naming it: a step error, not a silent skip)
    const wanted = replicas === undefined ? undefined : this.opts.image ? agentDeployment(this.cluster, this.opts.image, replicas).metadata.annotations?.[HASH_ANNOTATION] : 'no operator image';
    return { running: live !== undefined, ...(current !== undefined ? { current } : {}), ...(wanted !== undefined ? { wanted } : {}) };
  }

  /** Applies the agent's Deployment (its Secrets checked first: a missing one is a JobFailure naming it). */
  async startAgent(hibernated: boolean): Promise<string> {
    const replicas = agentReplicas(this.cluster.spec, hibernated) ?? 0;
    const image = this.image();
    await this.destinationSecrets(s3Destinations(this.cluster.spec));
    await this.api.apply(agentDeployment(this.cluster, image, replicas));
    return `applied Deployment ${agentName(this.cluster.name)} (${replicas} replica${replicas === 1 ? '' : 's'})`;
  }

  /** Deletes the agent's Deployment (idempotent). */
  async stopAgent(): Promise<string> {
    const name = agentName(this.cluster.name);
    await this.api.deleteDeployment(this.cluster.namespace, name);
    return `deleted Deployment ${name}: continuous backup is off`;
  }


  /** The spec's S3 destinations that do not take this cluster's backups now (checkDestinations), with the cause. */
  async destinationProblems(): Promise<DestinationError[]> {
    const dests = s3Destinations(this.cluster.spec);
    if (dests.length === 0) return [];
    return checkDestinations(dests, await kubeDestinationAccess(this.api.core, this.cluster.namespace, dests.map((d) => d.s3)), this.cluster.name);
  }

  /**
   * Continuous backup's progress from the first s3 destination (the durable truth, whatever the agent's pod is
   * doing): the newest segment's end revision and the time its writer saw it.
   */
  async continuousProgress(): Promise<Pick<BackupsStatus, 'continuousRevision' | 'continuousTime'>> {
    const d = s3Destinations(this.cluster.spec)[0];
    if (!d) return {};
    const access = await kubeDestinationAccess(this.api.core, this.cluster.namespace, [d.s3]);
    const dest = openS3(d.name, d.s3, access);
    try {
      const segs = await listSegments(dest, this.cluster.name);
      const newest = segs.reduce<SegmentRef | undefined>((a, b) => (a === undefined || b.toRevision > a.toRevision ? b : a), undefined);
      if (!newest) return {};
      const seg = await readSegment(dest, newest);
      return { continuousRevision: seg.toRevision, continuousTime: seg.lastTime };
    } finally {
      dest.store.close();
    }
  }

  /** The data claims of the members (what the StatefulSet's volumeClaimTemplate would create; it adopts them). */
  dataClaims(version: string): KubeObject[] {
    const l = memberLayout(this.cluster, version);
    return Array.from({ length: this.cluster.spec.replicas }, (_, i) => ({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: { name: `${l.claimTemplate}-${this.cluster.name}-${i}`, namespace: this.cluster.namespace, labels: { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/instance': this.cluster.name, [CLUSTER_LABEL]: this.cluster.name } },
      spec: l.claimSpec,
    }));
  }

  /**
   * Before the StatefulSet exists: creates the members' data claims and fills each data dir from
   * spec.restore.snapshot, with exactly the names, peer URLs and token the pods will start with.
   * Resolves once every member is restored; StepPending while the Job runs (a restarted operator finds it).
   */
  async restore(version: string): Promise<RestoreRecord> {
    const restore = this.cluster.spec.restore!;
    const name = jobName(this.cluster.name, 'restore');
    this.image();
    // the source first, before anything is created: a claim that is not there, or the restore point picked from
    // the bucket (a revision or time the backups do not cover is refused with their range); a Job already started
    // (an operator restart) carries its own choice
    const started = await this.readJob(name) !== undefined;
    let claimSource: { claim: string; path: string } | undefined;
    let picked: PickedRestore | undefined;
    if (restore.snapshot !== undefined) {
      claimSource = restoreSource(restore.snapshot, this.claim);
      await this.requireClaim(claimSource.claim, `spec.restore.snapshot ${restore.snapshot}`);
    } else if (!started) picked = await this.pickRestore();
    const secrets = await this.destinationSecrets(picked ? [picked.source] : []);
    const l = memberLayout(this.cluster, version);
    for (const pvc of this.dataClaims(version)) await this.api.apply(pvc);
    const volumes: object[] = claimSource
      ? [{ name: 'backups', persistentVolumeClaim: { claimName: claimSource.claim, readOnly: true } }]
      : [{ name: 'scratch', emptyDir: {} }, ...secrets.volumes];
    const mounts: object[] = claimSource
      ? [{ name: 'backups', mountPath: BACKUP_MOUNT, readOnly: true }]
      : [{ name: 'scratch', mountPath: SCRATCH_MOUNT }, ...secrets.mounts];
    const from = claimSource
      ? [`--snapshot=${BACKUP_MOUNT}/${claimSource.path}`]
      : picked ? [
        `--s3=${JSON.stringify(picked.source)}`, `--object=${picked.point.manifestKey}`, `--download=${SCRATCH_MOUNT}/restore`,
        // a point after the full snapshot: its delta segments replayed on top (a scratch member in the emptyDir)
        ...(picked.revision > picked.point.revision ? [`--revision=${picked.revision}`, `--segments=${picked.segments.map((r) => r.key).join(',')}`] : []),
      ] : [];
    const members: string[] = [];
    const sub = l.dataDir.startsWith(`${l.dataMount}/`) ? l.dataDir.slice(l.dataMount.length) : '';
    for (let i = 0; i < this.cluster.spec.replicas; i++) {
      const pod = `${this.cluster.name}-${i}`;
      volumes.push({ name: `data-${i}`, persistentVolumeClaim: { claimName: `${l.claimTemplate}-${pod}` } });
      mounts.push({ name: `data-${i}`, mountPath: `/restore/${pod}` });
      members.push(`${pod}=/restore/${pod}${sub}`);
    }
    const { record: rec } = await this.run<RestoreRecord>(name, () => this.job(name, 'restore', [
      'restore', ...from, `--members=${members.join(',')}`,
      `--initial-cluster=${l.initialCluster}`, `--initial-cluster-token=${l.token}`, `--record=${TERMINATION_LOG}`,
      // the database is at most a member's volume: its size bounds the time
    ], volumes, mounts, this.deadline(quantityBytes(this.cluster.spec.storage?.size ?? '1Gi')), secrets.env), 'RestoreJobFailed', 'RestoreJobTimeout');
    if (!Array.isArray(rec.members) || rec.members.length !== this.cluster.spec.replicas) {
      await this.deleteJob(name);
      throw new JobFailure('RestoreJobFailed', `Job ${this.cluster.namespace}/${name} reported an unexpected record: ${JSON.stringify(rec).slice(0, 300)}`);
    }
    return rec;
  }

  /** The restore point spec.restore.source picks, listed with the namespace's Secrets; a refusal is a JobFailure saying why. */
  private async pickRestore(): Promise<PickedRestore> {
    const restore = this.cluster.spec.restore!;
    try {
      const access = await kubeDestinationAccess(this.api.core, this.cluster.namespace, [restoreDestination(restore, this.cluster.spec).s3]);
      // no point asked for: the newest restorable revision, segments included (as the local runtime restores)
      return await pickRestore(restore, this.cluster.spec, access, this.cluster.name);
    } catch (e) {
      if (e instanceof JobFailure) throw e;
      if (e instanceof RestoreSourceError) throw new JobFailure(e.code === 'NotCovered' ? 'RestoreNotCovered' : 'RestoreSnapshotInvalid', e.message);
      if (e instanceof DestinationError) throw new JobFailure(`Destination${e.reason}`, e.message);
      throw e;
    }
  }

  /** Removes the restore Job once the StatefulSet exists. */
  async restoreDone(): Promise<void> {
    await this.deleteJob(jobName(this.cluster.name, 'restore'));
  }
}
