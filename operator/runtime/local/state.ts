// The local runtime's state file: the cluster's spec, its members (ports, dirs, release, pid), the
// upgrade progress and the backups record, written atomically (temp file, fsync, rename) so a crash leaves the old or the new
// state, never half of one.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BackupsStatus, SvcClusterSpec } from '../../api/types.js';
import type { ClusterRecords, ClusterRequests } from '../../planner/records.js';
import type { MaintenanceRecord, MaintenanceRequest, RecoveryProgress, ReplacementRecord, RestartRequest, RolloutProgress, UpgradeProgress } from '../../planner/types.js';
import { RuntimeError } from '../runtime.js';

/** One step line the local loop reported, with when (ISO). */
export interface StepHistoryEntry {
  time: string;
  line: string;
}

/** Step lines kept in the state file. */
export const STEP_HISTORY = 200;

/** The state with `line` as its last step, appended to the history when it changed (the newest STEP_HISTORY kept). */
export function withStepLine(s: LocalState, line: string, now: Date): LocalState {
  if (s.lastStep === line && s.stepHistory?.at(-1)?.line === line) return s;
  return { ...s, lastStep: line, stepHistory: [...(s.stepHistory ?? []), { time: now.toISOString(), line }].slice(-STEP_HISTORY) };
}

/** One member's record. */
export interface LocalMemberState {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  logFile: string;
  /** SVC_VERSION it runs (or is about to run) as. */
  version: string;
  /** pid of the current process; undefined when stopped. */
  pid?: number;
  /** When the current process was started (ISO). */
  startedAt?: string;
  /** Set for a member added to a running cluster: its initial cluster (member names), started as "existing". */
  join?: string[];
  /** memberConfig(spec, version).revision its current process was started with. */
  revision?: string;
  /** Its data dir has held a write-ahead log (seen by an observation): an empty one later means its data is lost. */
  hasData?: boolean;
  /** Its current process was started with --force-new-cluster (a recovery); its next start is without it. */
  forced?: boolean;
  /** The restart request (the requests.restart token) its current process was started under. */
  restartToken?: string;
}

/** The whole state file. */
export interface LocalState {
  name: string;
  spec: SvcClusterSpec;
  token: string;
  createdAt: string;
  members: LocalMemberState[];
  /** Ports reserved for members about to be added (their peer URL is registered before they exist). */
  reserved?: Record<string, { clientPort: number; peerPort: number }>;
  /** The last step line the orchestrator reported, for `local status`. */
  lastStep?: string;
  /** The step lines before it too, oldest first (the newest STEP_HISTORY, each once: when the line changed): `local report`'s events.txt. */
  stepHistory?: StepHistoryEntry[];
  /** Why the last scheduled or on-demand backup failed (cleared by the next one recorded). */
  backupFailure?: string;
  /** The record document (planner/records.ts): what the operator has done and is doing. */
  records: ClusterRecords;
  /** Counts the saves of `records`: a save against another count is refused (two processes at once). */
  recordsVersion: number;
  /** What a person asked for (`local backup|verify-backup|recover|restart|defrag|compact|move-leader|suspend`). */
  requests: ClusterRequests;
  /** The backup agent of spec.backup.continuous: its process and the configuration it was started with. */
  agent?: { pid?: number; startedAt?: string; config?: string };
}

/** Path of the state file in a state dir. */
export function stateFile(stateDir: string): string {
  return join(stateDir, 'state.json');
}

/** A state file written before the record document: its records and requests were fields of their own. */
interface StateBeforeRecords {
  progress?: UpgradeProgress;
  rollout?: RolloutProgress;
  backups?: BackupsStatus;
  replacements?: ReplacementRecord;
  recovery?: RecoveryProgress;
  maintenance?: MaintenanceRecord;
  hibernated?: boolean;
  backupRequest?: string;
  verifyRequest?: string;
  recoverRequest?: string;
  restartRequest?: RestartRequest;
  maintenanceRequest?: MaintenanceRequest;
  suspended?: boolean;
}

const OLD_FIELDS: Array<keyof StateBeforeRecords> = ['progress', 'rollout', 'backups', 'replacements', 'recovery', 'maintenance', 'hibernated', 'backupRequest', 'verifyRequest', 'recoverRequest', 'restartRequest', 'maintenanceRequest', 'suspended'];

/** The state with its records and requests in the record document (a state file of an earlier release moved over). */
export function migrateState(raw: LocalState & StateBeforeRecords): LocalState {
  if (raw.records !== undefined && raw.requests !== undefined) return raw;
  const drop = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  const records: ClusterRecords = drop({
    progress: raw.progress, rollout: raw.rollout, backups: raw.backups, replacements: raw.replacements, recovery: raw.recovery, maintenance: raw.maintenance,
    // (the member count a hibernation stopped: every member the state lists)
    hibernated: raw.hibernated ? raw.members.length : undefined,
  });
  const requests: ClusterRequests = drop({
    backup: raw.backupRequest, verify: raw.verifyRequest, recover: raw.recoverRequest, restart: raw.restartRequest, maintenance: raw.maintenanceRequest,
    suspended: raw.suspended ? true : undefined,
  });
  const out = { ...raw, records: raw.records ?? records, requests: raw.requests ?? requests, recordsVersion: raw.recordsVersion ?? 0 } as LocalState & StateBeforeRecords;
  for (const k of OLD_FIELDS) delete out[k];
  return out;
}

/** Reads the state; undefined when there is none. */
export function readState(stateDir: string): LocalState | undefined {
  const f = stateFile(stateDir);
  if (!existsSync(f)) return undefined;
  try {
    return migrateState(JSON.parse(readFileSync(f, 'utf8')) as LocalState);
  } catch (e) {
    throw new RuntimeError('STATE_IO', `cannot read ${f}: ${(e as Error).message}`, { cause: e });
  }
}

/** Writes the state atomically and durably. */
export function writeState(stateDir: string, state: LocalState): void {
  const f = stateFile(stateDir);
  mkdirSync(dirname(f), { recursive: true });
  const tmp = `${f}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    const buf = Buffer.from(`${JSON.stringify(state, null, 2)}\n`);
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, f);
  // fsync the directory so the rename itself survives a power cut.
  try {
    const dfd = openSync(dirname(f), 'r');
    fsyncSync(dfd);
    closeSync(dfd);
  } catch {
    // not supported everywhere; the rename is still atomic
  }
}
