// Per-cluster upgrade metrics of the controller: which step each cluster is at, how many members are done, how
// long finished upgrades took, and how many steps were carried out. The gauges are derived from the recorded
// progress (the annotation), so a new operator pod shows the same values as the one it replaced.
import { Counter, Gauge, type Registry } from 'prom-client';
import { STEP_KINDS } from '../planner/steps.js';
import type { LossCause, MaintenanceReason, Step, UpgradeProgress } from '../planner/types.js';
import type { VerifiedStatus } from '../api/types.js';

const MAINTENANCE_REASONS: readonly MaintenanceReason[] = ['NoSpace', 'Scheduled', 'Threshold', 'Requested'];

const LOSS_CAUSES: readonly LossCause[] = ['DataLost', 'AlreadyBootstrapped', 'DataCorrupt', 'MemberIdChanged', 'VolumeLost', 'NodeLost'];

/** The upgrade metrics of one registry. */
export class UpgradeMetrics {
  private readonly step: Gauge<'namespace' | 'cluster' | 'step'>;
  private readonly membersDone: Gauge<'namespace' | 'cluster'>;
  private readonly duration: Gauge<'namespace' | 'cluster' | 'from' | 'to'>;
  private readonly steps: Counter<'namespace' | 'cluster' | 'kind'>;
  private readonly backupFailing: Gauge<'namespace' | 'cluster'>;
  private readonly verifyFailing: Gauge<'namespace' | 'cluster'>;
  private readonly verifiedAt: Gauge<'namespace' | 'cluster'>;
  private readonly certExpiry: Gauge<'namespace' | 'cluster' | 'secret' | 'use'>;
  /** The certificate series set per cluster (dropped when a Secret is no longer named). */
  private readonly certs = new Map<string, Set<string>>();
  private readonly replacements: Counter<'namespace' | 'cluster' | 'cause'>;
  private readonly defrags: Counter<'namespace' | 'cluster' | 'reason'>;
  private readonly reclaimed: Counter<'namespace' | 'cluster'>;
  private readonly noSpaceRaised: Gauge<'namespace' | 'cluster'>;
  /** cluster key -> "from/to" label pairs of the durations set for it (removed with the cluster). */
  private readonly durations = new Map<string, Set<string>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.step = new Gauge({ name: 'svc_operator_upgrade_step', help: 'The step each cluster is at: 1 for the current step kind, 0 for the others.', labelNames: ['namespace', 'cluster', 'step'], registers });
    this.membersDone = new Gauge({ name: 'svc_operator_upgrade_members_done', help: 'Members running the target release of the latest upgrade (healthy, caught up).', labelNames: ['namespace', 'cluster'], registers });
    this.duration = new Gauge({ name: 'svc_operator_upgrade_duration_seconds', help: 'Duration of a completed upgrade, from its first step (the snapshot) to the verified end.', labelNames: ['namespace', 'cluster', 'from', 'to'], registers });
    this.steps = new Counter({ name: 'svc_operator_upgrade_steps_total', help: 'Steps carried out by this operator process, by kind.', labelNames: ['namespace', 'cluster', 'kind'], registers });
    this.replacements = new Counter({ name: 'svc_operator_member_replacements_total', help: 'Members replaced by this operator process because they could not come back (their successor promoted), by cause: DataLost, AlreadyBootstrapped, DataCorrupt, MemberIdChanged, VolumeLost, NodeLost.', labelNames: ['namespace', 'cluster', 'cause'], registers });
    this.verifyFailing = new Gauge({ name: 'svc_operator_backup_verify_failing', help: '1 while the latest restore drill of the cluster (spec.backup.verify) failed: its newest backup did not restore to the KV hash recorded at backup time; 0 after a drill passed.', labelNames: ['namespace', 'cluster'], registers });
    this.verifiedAt = new Gauge({ name: 'svc_operator_backup_last_verified_timestamp_seconds', help: 'When the latest restore drill of the cluster finished (passed or failed), Unix seconds.', labelNames: ['namespace', 'cluster'], registers });
    this.defrags = new Counter({ name: 'svc_operator_defrags_total', help: 'Members defragmented by this operator process, by reason: NoSpace, Scheduled, Threshold, Requested.', labelNames: ['namespace', 'cluster', 'reason'], registers });
    this.reclaimed = new Counter({ name: 'svc_operator_defrag_reclaimed_bytes_total', help: 'Bytes of database files given back by the defragmentations of this operator process (before less after).', labelNames: ['namespace', 'cluster'], registers });
    this.noSpaceRaised = new Gauge({ name: 'svc_operator_nospace_alarm', help: '1 while a member of the cluster has the NOSPACE alarm raised (writes refused; the operator relieves it or says why it cannot), else 0.', labelNames: ['namespace', 'cluster'], registers });
    this.backupFailing = new Gauge({ name: 'svc_operator_backup_failing', help: '1 while the latest backup of the cluster (pre-upgrade, scheduled or on demand) failed and none has succeeded since, else 0.', labelNames: ['namespace', 'cluster'], registers });
    this.certExpiry = new Gauge({ name: 'svc_operator_certificate_expiry_timestamp_seconds', help: 'When the certificate of each TLS Secret a cluster names (spec.tls.clientSecret, spec.tls.peerSecret) expires, in seconds since the epoch.', labelNames: ['namespace', 'cluster', 'secret', 'use'], registers });
  }

  /** The expiry of each certificate the cluster uses now (read from its Secrets at this reconcile). */
  certificates(namespace: string, cluster: string, expiry: ReadonlyArray<{ secret: string; use: string; notAfter: number }>): void {
    const key = `${namespace}/${cluster}`;
    const now = new Set(expiry.map((e) => `${e.secret}\n${e.use}`));
    for (const old of this.certs.get(key) ?? []) {
      if (!now.has(old)) this.certExpiry.remove({ namespace, cluster, secret: old.split('\n')[0], use: old.split('\n')[1] });
    }
    for (const e of expiry) this.certExpiry.set({ namespace, cluster, secret: e.secret, use: e.use }, e.notAfter);
    this.certs.set(key, now);
  }

  /**
   * Records what one reconcile of namespace/cluster planned, with the progress recorded for it. The step gauge is
   * an enum in Prometheus style: 1 for the kind planned, 0 for every other kind of the step table.
   */
  observe(namespace: string, cluster: string, step: Step, progress: UpgradeProgress | undefined): void {
    for (const kind of STEP_KINDS) this.step.set({ namespace, cluster, step: kind }, kind === step.kind ? 1 : 0);
    if (!progress) return;
    this.membersDone.set({ namespace, cluster }, progress.membersDone.length);
    if (progress.finishedAt !== undefined && progress.supersededBy === undefined) {
      this.duration.set({ namespace, cluster, from: progress.from, to: progress.to }, Math.max(0, progress.finishedAt - progress.startedAt) / 1000);
      const key = `${namespace}/${cluster}`;
      const pairs = this.durations.get(key) ?? new Set<string>();
      pairs.add(`${progress.from}\n${progress.to}`);
      this.durations.set(key, pairs);
    }
  }

  /** Counts a step that was carried out (a mutating step or the completion); a replacement's promotion ends it. */
  stepDone(namespace: string, cluster: string, step: Step): void {
    this.steps.inc({ namespace, cluster, kind: step.kind });
    if (step.kind === 'promoteMember' && step.replaced) this.replacements.inc({ namespace, cluster, cause: step.replaced });
  }

  /** Counts one member defragmented and the bytes it gave back. */
  defragmented(namespace: string, cluster: string, d: { reason: MaintenanceReason; before?: number; after?: number }): void {
    this.defrags.inc({ namespace, cluster, reason: d.reason });
    if (d.before !== undefined && d.after !== undefined && d.before > d.after) this.reclaimed.inc({ namespace, cluster }, d.before - d.after);
  }

  /** Whether a member of the cluster has the NOSPACE alarm raised. */
  noSpace(namespace: string, cluster: string, raised: boolean): void {
    this.noSpaceRaised.set({ namespace, cluster }, raised ? 1 : 0);
  }

  /** Whether the cluster's latest backup failed (the status shows why: BackupReady, Warning Events). */
  backup(namespace: string, cluster: string, failing: boolean): void {
    this.backupFailing.set({ namespace, cluster }, failing ? 1 : 0);
  }

  /** The latest restore drill as status.backups.lastVerified records it (a new operator pod shows the same); none: no series. */
  verified(namespace: string, cluster: string, last: VerifiedStatus | undefined): void {
    if (!last) return;
    this.verifyFailing.set({ namespace, cluster }, last.result === 'Failed' ? 1 : 0);
    this.verifiedAt.set({ namespace, cluster }, Date.parse(last.time) / 1000);
  }

  /** Drops the series of a deleted cluster. */
  forget(namespace: string, cluster: string): void {
    for (const kind of STEP_KINDS) {
      this.step.remove({ namespace, cluster, step: kind });
      this.steps.remove({ namespace, cluster, kind });
    }
    this.membersDone.remove({ namespace, cluster });
    this.backupFailing.remove({ namespace, cluster });
    this.verifyFailing.remove({ namespace, cluster });
    this.verifiedAt.remove({ namespace, cluster });
    this.certificates(namespace, cluster, []);
    this.certs.delete(`${namespace}/${cluster}`);
    this.noSpaceRaised.remove({ namespace, cluster });
    this.reclaimed.remove({ namespace, cluster });
    for (const reason of MAINTENANCE_REASONS) this.defrags.remove({ namespace, cluster, reason });
    for (const cause of LOSS_CAUSES) this.replacements.remove({ namespace, cluster, cause });
    const key = `${namespace}/${cluster}`;
    for (const pair of this.durations.get(key) ?? []) {
      const [from, to] = pair.split('\n');
      this.duration.remove({ namespace, cluster, from, to });
    }
    this.durations.delete(key);
  }
}
