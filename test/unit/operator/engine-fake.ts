// A fake runtime and member client over the simulated cluster of scale-sim.ts, for driving the one engine
// (operator/orchestrator/engine.ts) without processes. Two shapes, as the real runtimes differ:
// - "local": the engine streams snapshots and backups itself (takeBackup names a file by the slot or token).
// - "kubernetes": prepare(), takeSnapshot() and takeBackup() through a Job that runs for a few looks (StepPending
//   meanwhile), as the Kubernetes runtime has them.
// Both keep the record document (runtime.records) in the world, each record's writes counted.
// Durable state (the records, Jobs) lives in the world and survives an engine crash; the engine's memory does not.
import type { BackupEntry, BackupsStatus, SnapshotRecord, SvcClusterSpec } from '../../../operator/api/types.js';
import { dueOfStep } from '../../../operator/backup/schedule.js';
import type { ClusterRecords, RecordsDocument } from '../../../operator/planner/records.js';
import type { ClusterMemberInfo, MemberStatusInfo, VersionInfo } from '../../../operator/members/index.js';
import type { MemberApi } from '../../../operator/orchestrator/member-api.js';
import { RuntimeError, StepPending, type BackupStep, type RecordStore, type RecoverSnapshotStep, type RuntimeMember, type RuntimeWith, type StreamTo } from '../../../operator/runtime/runtime.js';
import type { MaintenanceRequest, RecoveryProgress, Step, TargetRevision, UpgradeProgress } from '../../../operator/planner/types.js';
import { ScaleSim } from './scale-sim.js';

export type Mode = 'local' | 'kubernetes';

const nameOf = (url: string): string => url.replace(/^[a-z]+:\/\//, '');

/** The simulated cluster plus the durable records a runtime keeps. */
export class World {
  sim: ScaleSim;
  created: boolean;
  /** The record document as stored (JSON) and its version; each record's writes counted by its field. */
  recordsText = '{}';
  recordsVersion = 0;
  writes: Partial<Record<keyof ClusterRecords, number>> = {};
  /** Backup Jobs by upgrade start: looks left until done. */
  jobs = new Map<number, number>();
  snapshots: SnapshotRecord[] = [];
  moveLeaderCalls: string[] = [];
  /** After a MoveLeader, the old leader keeps reporting leadership (the new one not yet) for this many observations. */
  staleLeaderLooks = 0;
  private stale?: { name: string; to: string; looks: number };
  prepares = 0;
  /** What members should run with (configuration, certificates); each member's is set when it (re)starts. */
  target = { config: 'c1', tls: 't1' as string | undefined };
  revisions = new Map<string, { config: string; tls?: string }>();
  /** The spec the record's retention and schedule follow (set by the driver). */
  spec?: SvcClusterSpec;
  /** The on-demand backup request token, the cluster's creation (ms). */
  backupRequest?: string;
  createdAt = 0;
  /** Every scheduled or on-demand backup taken (a retake counts again). */
  backupsTaken: BackupEntry[] = [];
  /** Backup Jobs by slot or token: looks left until done. */
  backupJobs = new Map<string, number>();
  /** Quorum-loss recovery: the request token, members whose data is gone. */
  recoverRequest?: string;
  dataLost = new Set<string>();
  /** Members running with --force-new-cluster, and every forceNewCluster restart (a repeat counts again). */
  forced = new Set<string>();
  forcedStarts: string[] = [];
  /** Recovery snapshot Jobs by token: looks left until done. */
  recoveryJobs = new Map<string, number>();
  /** Break-glass: a person suspended reconciling. */
  suspended = false;
  /** Maintenance: the request, every defragmentation and compaction carried out. */
  maintenanceRequest?: MaintenanceRequest;
  defrags: string[] = [];
  compactions: number[] = [];
  /** The store revision members report. */
  revision = 1;
  /** Kubernetes: members labelled out of the client Service, and how many looks until the endpoints drop each. */
  notServing = new Map<string, number>();

  /** Members `names` are lost: killed, their data gone (the cluster loses quorum when they are a majority). */
  lose(names: string[]): void {
    for (const n of names) {
      const m = this.sim.member(n);
      m.running = false;
      m.leader = false;
      this.dataLost.add(n);
    }
    if (!this.sim.observe().members.some((m) => m.leader)) for (const m of this.sim.members) m.leader = false;
  }

  /** The records as stored. */
  get records(): ClusterRecords {
    return JSON.parse(this.recordsText) as ClusterRecords;
  }

  /** Writes the document, counting a write for each record it changes. */
  saveRecords(records: ClusterRecords): void {
    const before = this.records as Record<string, unknown>;
    for (const k of new Set([...Object.keys(before), ...Object.keys(records)]) as Set<keyof ClusterRecords>) {
      if (JSON.stringify(before[k]) !== JSON.stringify(records[k])) this.writes[k] = (this.writes[k] ?? 0) + 1;
    }
    this.recordsText = JSON.stringify(records);
    this.recordsVersion++;
  }

  get progress(): UpgradeProgress | undefined {
    return this.records.progress;
  }

  get recovery(): RecoveryProgress | undefined {
    return this.records.recovery;
  }

  constructor(n: number, version: string, leader = 0, created = true) {
    this.sim = new ScaleSim(n, version, leader);
    this.created = created;
  }

  member(url: string) {
    return this.sim.members.find((m) => m.name === nameOf(url));
  }

  /** The member as observed now, or an error as a member that does not answer gives. */
  observed(url: string) {
    const o = this.sim.observe().members.find((m) => m.name === nameOf(url));
    if (!o || !o.healthy) throw new Error(`${nameOf(url)} does not answer`);
    return o;
  }

  isLeader(url: string): boolean {
    // right after a MoveLeader: the old leader still says it leads, the new one does not say so yet
    if (this.stale && this.stale.looks > 0) {
      if (this.stale.name === nameOf(url)) {
        this.stale.looks--;
        return true;
      }
      if (this.stale.to === nameOf(url)) return false;
    }
    return this.observed(url).leader;
  }

  /** A backup of the leader at `location` (the world's record of it). */
  takeBackupOf(step: BackupStep, location: string): BackupEntry {
    if (!this.sim.members.find((m) => m.name === step.member)?.leader) throw new Error(`${step.member} is not the leader`);
    const e: BackupEntry = { location, member: step.member, revision: this.backupsTaken.length + 1, size: 100, sha256: 'c'.repeat(64), time: new Date(1000 + this.backupsTaken.length).toISOString(), kind: dueOfStep(step).kind };
    this.backupsTaken.push(e);
    return e;
  }

  get backups(): BackupsStatus | undefined {
    return this.records.backups;
  }

  moveLeader(url: string, toId: string): void {
    const from = nameOf(url);
    const to = this.sim.members.find((m) => m.id === toId);
    if (!to) throw new Error(`no member ${toId}`);
    this.moveLeaderCalls.push(`${from}->${to.name}`);
    this.sim.moveLeader(from, to.name);
    if (this.staleLeaderLooks > 0) this.stale = { name: from, to: to.name, looks: this.staleLeaderLooks };
  }
}

/** A MemberClient's calls, answered by the world. */
export class FakeClient implements MemberApi {
  constructor(private readonly w: World) {}

  async version(url: string): Promise<VersionInfo> {
    const o = this.w.observed(url);
    return { etcdserver: o.release!, etcdcluster: o.clusterVersion! };
  }

  async healthy(url: string): Promise<boolean> {
    return this.w.sim.observe().members.find((m) => m.name === nameOf(url))?.healthy ?? false;
  }

  async isLeader(url: string): Promise<boolean> {
    return this.w.isLeader(url);
  }

  async status(url: string): Promise<MemberStatusInfo> {
    const o = this.w.observed(url);
    return { id: o.id!, leader: '0', raftIndex: o.appliedIndex!, appliedIndex: o.appliedIndex!, dbSize: 1, revision: this.w.revision };
  }

  async compact(url: string, revision: number): Promise<void> {
    this.w.observed(url);
    this.w.compactions.push(revision);
  }

  async defragment(url: string): Promise<void> {
    const o = this.w.observed(url);
    if (o.leader && this.w.sim.members.length > 1) this.w.sim.violations.push(`defragmented the leader ${o.name}`);
    this.w.defrags.push(o.name);
  }

  async authEnabled(url: string): Promise<boolean> {
    this.w.observed(url);
    return this.w.sim.auth;
  }

  async memberList(url: string): Promise<ClusterMemberInfo[]> {
    this.w.observed(url);
    const cm = this.w.sim.observe().clusterMembers;
    if (!cm) throw new Error('no member list');
    return cm.map((c) => ({ id: c.id, name: c.started ? c.member! : '', peerURLs: [`peer://${c.member}`], isLearner: c.isLearner === true }));
  }

  async memberAdd(url: string, peerURL: string, opts: { isLearner?: boolean } = {}): Promise<string> {
    this.w.observed(url);
    this.w.sim.memberAdd(nameOf(peerURL), opts.isLearner === true);
    return this.w.sim.cluster.at(-1)!.id;
  }

  async memberPromote(url: string, id: string): Promise<void> {
    this.w.observed(url);
    this.w.sim.promote(id);
  }

  async memberRemove(url: string, id: string): Promise<void> {
    this.w.observed(url);
    this.w.sim.memberRemove(id);
  }

  async moveLeader(url: string, targetId: string): Promise<void> {
    this.w.moveLeader(url, targetId);
  }

  async snapshot(url: string, name: string, file: string): Promise<SnapshotRecord> {
    this.w.observed(url);
    if (file.startsWith('/backups/')) {
      // a scheduled or on-demand backup streamed by the engine (the local shape's backupLocation)
      const e = this.w.takeBackupOf({ kind: 'backup', reason: file.includes('-20') ? 'Scheduled' : 'OnDemand', member: name, id: '' }, file);
      return { location: e.location, member: e.member, revision: e.revision, size: e.size, sha256: e.sha256, time: e.time };
    }
    const rec = { location: file, member: name, revision: this.w.snapshots.length + 1, size: 100, sha256: 'a'.repeat(64), time: new Date(0).toISOString() };
    this.w.snapshots.push(rec);
    return rec;
  }
}

/** The runtime over the world. */
const FAKE_CAPABILITIES = ['scaling', 'healing', 'recovery', 'backups'] as const;

export class FakeRuntime implements RuntimeWith<(typeof FAKE_CAPABILITIES)[number]> {
  readonly capabilities = FAKE_CAPABILITIES;
  prepare?: () => Promise<void>;
  /** Local shape: the engine streams backups and the survivor's snapshot to a file; Kubernetes: a Job. */
  takeBackup: (step: BackupStep) => Promise<BackupEntry | StreamTo> = async (step) => ({ streamTo: this.backupLocation(step) });
  takeSnapshot?: (step: Extract<Step, { kind: 'snapshot' }>, progress: UpgradeProgress) => Promise<SnapshotRecord>;
  takeRecoverySnapshot: (step: RecoverSnapshotStep) => Promise<SnapshotRecord | StreamTo> = async (step) => ({ streamTo: `/recovery/${step.member}-recover-${step.token}.db` });
  setServing?: (member: string, serving: boolean) => Promise<void>;

  readonly records: RecordStore = {
    load: async (): Promise<RecordsDocument> => ({
      records: this.w.records, version: String(this.w.recordsVersion), cluster: { name: 'c', created: this.w.createdAt },
      requests: {
        ...(this.w.backupRequest !== undefined ? { backup: this.w.backupRequest } : {}), ...(this.w.recoverRequest !== undefined ? { recover: this.w.recoverRequest } : {}),
        ...(this.w.maintenanceRequest ? { maintenance: this.w.maintenanceRequest } : {}), ...(this.w.suspended ? { suspended: true } : {}),
      },
    }),
    save: async (records, version) => {
      if (version !== String(this.w.recordsVersion)) throw new RuntimeError('STATE_IO', `records at ${this.w.recordsVersion}, not ${version}`);
      this.w.saveRecords(records);
      return String(this.w.recordsVersion);
    },
  };

  constructor(private readonly w: World, readonly kind: Mode) {
    if (kind !== 'kubernetes') return;
    this.takeRecoverySnapshot = async (step) => {
      const left = this.w.recoveryJobs.get(step.token) ?? 2;
      if (left > 0) {
        this.w.recoveryJobs.set(step.token, left - 1);
        throw new StepPending('BackupRunning', `recovery snapshot Job of ${step.token} is running`, 10);
      }
      this.w.recoveryJobs.delete(step.token);
      this.w.observed(`sim://${step.member}`);
      const rec = { location: `pvc://backups/${step.member}-recover-${step.token}.db`, member: step.member, revision: this.w.snapshots.length + 1, size: 100, sha256: 'd'.repeat(64), time: new Date(0).toISOString() };
      this.w.snapshots.push(rec);
      return rec;
    };
    this.prepare = async () => {
      this.w.prepares++;
    };
    this.takeSnapshot = async (step, progress) => {
      const left = this.w.jobs.get(progress.startedAt) ?? 3;
      if (left > 0) {
        this.w.jobs.set(progress.startedAt, left - 1);
        throw new StepPending('BackupRunning', `backup Job of ${progress.startedAt} is running`, 10);
      }
      this.w.jobs.delete(progress.startedAt);
      const rec = { location: `pvc://backups/${step.member}-${progress.startedAt}.db`, member: step.member, revision: this.w.snapshots.length + 1, size: 100, sha256: 'b'.repeat(64), time: new Date(0).toISOString() };
      this.w.snapshots.push(rec);
      return rec;
    };
    this.takeBackup = async (step) => {
      const left = this.w.backupJobs.get(step.id) ?? 3;
      if (left > 0) {
        this.w.backupJobs.set(step.id, left - 1);
        throw new StepPending('BackupRunning', `backup Job of ${step.id} is running`, 10);
      }
      this.w.backupJobs.delete(step.id);
      return this.w.takeBackupOf(step, `pvc://backups/${step.member}-${step.id}.db`);
    };
    this.setServing = async (member, serving) => {
      if (serving) {
        this.w.notServing.delete(member);
        return;
      }
      const left = this.w.notServing.get(member) ?? 1;
      this.w.notServing.set(member, Math.max(0, left - 1));
      if (left > 0) throw new StepPending('ServiceEndpoints', `waiting for ${member} to leave the endpoints`, 10);
    };
  }

  async members(): Promise<RuntimeMember[]> {
    if (!this.w.created) return [];
    return this.w.sim.members.map((m) => {
      const rev = this.w.revisions.get(m.name) ?? this.w.target;
      return {
        name: m.name, clientURL: `sim://${m.name}`, configuredVersion: m.configured, running: m.running, configRevision: rev.config, ...(rev.tls ? { tlsRevision: rev.tls } : {}),
        ...(m.lost ? { lost: { cause: m.lost, detail: 'simulated' } } : {}),
        dataLost: this.w.dataLost.has(m.name), ...(m.running && this.w.forced.has(m.name) ? { forcedNewCluster: true } : {}),
      };
    });
  }

  async createCluster(spec: SvcClusterSpec): Promise<void> {
    this.w.sim = new ScaleSim(spec.replicas, spec.version, 0);
    for (const m of this.w.sim.members) m.downTicks = 2;
    this.w.created = true;
  }

  async restartMember(name: string, version: string): Promise<void> {
    this.w.forced.delete(name);
    this.w.sim.configure(name, version);
    this.w.sim.restart(name);
    this.w.revisions.set(name, { ...this.w.target });
  }

  async targetRevision(): Promise<TargetRevision | undefined> {
    return { ...this.w.target };
  }

  snapshotLocation(from: string, to: string, member: string): string {
    return `/snapshots/${member}-${from}-to-${to}.db`;
  }

  async pruneSnapshots(): Promise<string[]> {
    return [];
  }

  backupLocation(step: BackupStep): string {
    return `/backups/${step.member}-${step.id}.db`;
  }

  async v2DataBytes(): Promise<number | undefined> {
    return this.w.sim.v2Bytes;
  }

  async peerURL(name: string): Promise<string> {
    return `peer://${name}`;
  }

  memberOfPeerURL(url: string): string | undefined {
    return nameOf(url);
  }

  async startMember(name: string): Promise<void> {
    this.w.sim.startMember(name);
    this.w.revisions.set(name, { ...this.w.target });
  }

  async retireMember(name: string): Promise<void> {
    this.w.sim.retire(name);
  }

  async resetMember(name: string): Promise<void> {
    this.w.sim.reset(name);
  }

  async startReplacement(name: string): Promise<void> {
    this.w.sim.startMember(name);
  }

  async forceNewCluster(survivor: string, lost: string[]): Promise<void> {
    this.w.sim.forceNewCluster(survivor, lost, this.kind === 'kubernetes');
    this.w.forced.add(survivor);
    this.w.forcedStarts.push(survivor);
  }
}
