// The local runtime: each member is a detached child process (`node <svc entry>` with SVC_VERSION set to
// its release) with its data dir and log under the state dir. Members outlive the orchestrator (so
// `local apply` can exit and `local status` can look later); everything needed to find them again is in
// the state file, which is written before every change.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SvcClusterSpec } from '../../api/types.js';
import { memberArgs, memberConfig } from '../../api/member-config.js';
import { restoreSnapshot, verifySnapshotFile } from '../../../server/cluster/restore.js';
import { nopLogger } from '../../../server/log/logger.js';
import type { BackupEntry, BackupKind, RestoreSpec, SnapshotRecord, VerifiedStatus } from '../../api/types.js';
import { drillChain, runDrill } from './drill.js';
import { svcNodeArgs } from './svc-process.js';
import { combineDrills, judgeChain, judgeDrill, noBackupToVerify, pointEntry, type ChainMeasure } from '../../backup/verify.js';
import {
  checkDestinations, DestinationError, downloadInto, listRestorePoints, listSegments, openS3, pickRestore, readSegment, RestoreSourceError, restoreSourcePoints, retentionOf, s3Destinations, shipToDestinations, userCredentials,
  type DestinationAccess, type OpenDestination, type PickedRestore, type SourcePoints,
} from '../../backup/destinations/index.js';
import { changesBetween, type DeltaSegment, type RevisionChange } from '../../backup/delta.js';
import { planRestore, type RestorePoint } from '../../backup/restore-points.js';
import { keyspaceHash } from '../delta-replay.js';
import { Client } from '../../../server/client/index.js';
import { replayIntoSnapshot, ScratchMemberError } from './drill.js';
import { backupFileFor, dueOfStep } from '../../backup/schedule.js';
import { pruneSnapshotDir, snapshotPath } from '../snapshot-files.js';
import type { AgentObservation, MaintenanceRequest, MemberLoss, TargetRevision } from '../../planner/types.js';
import type { ClusterRecords, ClusterRequests, RecordsDocument } from '../../planner/records.js';
import { ordinalOf } from '../../planner/scaling.js';
import { RuntimeError, type BackupStep, type RecoverSnapshotStep, type RuntimeMember, type RuntimeWith, type StreamTo, type VerifyStep } from '../runtime.js';
import { lossInLine, wayOutOfLine } from '../healing.js';
import { freePorts } from './ports.js';
import { readState, stateFile, withStepLine, writeState, type LocalMemberState, type LocalState } from './state.js';
import type { AgentStatus } from '../backup-agent.js';

/** The compiled svc server entry next to this module's build (<outDir>/server/cli/svc.js). */
/** svc.js of the same build (the CLIs hand in SVC_OPERATOR_SVC_ENTRY as `svcEntry`: the environment is read in cli/ only). */
export const DEFAULT_SVC_ENTRY = fileURLToPath(new URL('../../../server/cli/svc.js', import.meta.url));
/** The operator's main.js of the same build: the backup agent runs `svc-operator backup-agent` from it. */
export const OPERATOR_ENTRY = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export interface LocalRuntimeOptions {
  /** Where state, data dirs, logs and snapshots live. Default ./.svc-local. */
  stateDir?: string;
  /** Cluster name (metadata.name); needed to create. */
  name?: string;
  /** Compiled svc.js to run. Default DEFAULT_SVC_ENTRY. */
  svcEntry?: string;
  /** How long a graceful stop may take before SIGKILL. Default 15 s. */
  stopGraceMs?: number;
  /** How object-store destinations are opened (credentials: a secrets folder, the AWS_* variables); none: they fail. */
  destinations?: DestinationAccess;
}

/** The restore spec.restore.source picks, downloaded and checked (and the delta segments replayed into it). */
export interface FetchedRestore {
  file: string;
  point: RestorePoint;
  /** The revision the file holds: the point's, or later with delta segments replayed. */
  revision: number;
  /** Delta segments replayed. */
  segments: number;
  /** The destination, as messages name it. */
  where: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when a process with this pid exists and is not a zombie (a killed member not yet reaped by its parent). */
function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // "<pid> (<comm>) <state> ...": Z = exited, not yet reaped
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): the signal said it exists
  }
}

/** A member's log line as a person reads it: the message (and error) of a JSON line, else the line. */
function readable(line: string): string {
  try {
    const j = JSON.parse(line) as { level?: string; msg?: string; error?: string };
    if (typeof j.msg === 'string') return `${j.level === 'error' || j.level === 'fatal' || j.level === 'panic' ? `${j.level}: ` : ''}${j.msg}${j.error ? ` (${j.error})` : ''}`;
  } catch {
    // not JSON
  }
  return line;
}

/** True when the write-ahead log of a data dir has a segment. */
function hasWal(dataDir: string): boolean {
  const dir = join(dataDir, 'member', 'wal');
  try {
    return readdirSync(dir).some((f) => f.endsWith('.wal'));
  } catch {
    return false;
  }
}

/** The lines the member's current (last) process wrote: after the last "=== svc start|reset" marker. */
function lastRun(logFile: string): { header: string; lines: string[] } {
  let log: string;
  try {
    log = readFileSync(logFile, 'utf8');
  } catch {
    return { header: '', lines: [] };
  }
  const part = log.slice(Math.max(0, log.lastIndexOf('=== svc '))).split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return part[0]?.startsWith('=== svc ') ? { header: part[0], lines: part.slice(1) } : { header: '', lines: part };
}

/** Why spec.restore.snapshot cannot create a local cluster (a missing, unreadable or corrupt file), or undefined. */
export function restoreProblem(snapshot: string): string | undefined {
  try {
    verifySnapshotFile(resolve(snapshot));
    return undefined;
  } catch (e) {
    return `spec.restore.snapshot: ${(e as Error).message}; name a backup file \`svc-operator local status\` lists (or any verified snapshot)`;
  }
}

/** True when a member's data dir holds data (its member/ folder with a WAL or a db). */
function hasData(dataDir: string): boolean {
  const member = join(dataDir, 'member');
  try {
    return readdirSync(member).some((d) => readdirSync(join(member, d)).length > 0);
  } catch {
    return false;
  }
}

/** Members run by this process that exited, with how (the state file only has pids). */
const exits = new Map<number, string>();

/** The local runtime. */
/** What the local runtime can do (each capability's interface is implemented below, or this does not compile). */
const LOCAL_CAPABILITIES = ['scaling', 'healing', 'recovery', 'backups', 'drills', 'hibernation', 'continuous'] as const;

export class LocalRuntime implements RuntimeWith<(typeof LOCAL_CAPABILITIES)[number]> {
  readonly kind = 'local';
  readonly capabilities = LOCAL_CAPABILITIES;
  readonly stateDir: string;
  private readonly name?: string;
  private readonly svcEntry: string;
  private readonly stopGraceMs: number;
  private readonly access?: DestinationAccess;
  /** The restore point this process fetched already (`local apply` checks it before it creates the cluster). */
  private fetched?: FetchedRestore;
  /** The file of backups/ the backup under way streams to (removed when it fails). */
  private streaming?: string;

  constructor(opts: LocalRuntimeOptions = {}) {
    this.stateDir = resolve(opts.stateDir ?? '.svc-local');
    this.name = opts.name;
    this.svcEntry = opts.svcEntry ?? DEFAULT_SVC_ENTRY;
    this.stopGraceMs = opts.stopGraceMs ?? 15_000;
    this.access = opts.destinations;
  }

  /** The record document: one field of the state file, its saves counted (a save against another count is refused). */
  readonly records = {
    load: async (): Promise<RecordsDocument> => {
      const s = this.state();
      if (!s) return { records: {}, requests: {}, version: 'none', cluster: { name: this.name ?? '', created: Date.now(), backupsAt: this.backupDir() } };
      return { records: s.records, requests: s.requests, version: String(s.recordsVersion), cluster: { name: s.name, created: Date.parse(s.createdAt), backupsAt: this.backupDir() } };
    },
    save: async (records: ClusterRecords, version: string): Promise<string> => {
      const s = this.mustState();
      // (a cluster created in this pass: its state file is new)
      if (version !== 'none' && String(s.recordsVersion) !== version) {
        throw new RuntimeError('STATE_IO', `the records in ${stateFile(this.stateDir)} changed since this pass read them (version ${version}, now ${s.recordsVersion}): another svc-operator is reconciling this state dir; stop it, or let it finish`);
      }
      const next = s.recordsVersion + 1;
      this.save({ ...s, records, recordsVersion: next });
      return String(next);
    },
  };

  /** The state file's content, if any. */
  state(): LocalState | undefined {
    return readState(this.stateDir);
  }

  private mustState(): LocalState {
    const s = this.state();
    if (!s) throw new RuntimeError('NO_CLUSTER', `no local cluster in ${this.stateDir}`);
    return s;
  }

  /**
   * Writes the runtime's part of the state; the person's part (spec, requests) stays as it is on disk now, so a
   * `local apply` or a request saved while a step was under way (read before, written after) is not undone.
   */
  private save(s: LocalState): void {
    const disk = readState(this.stateDir);
    writeState(this.stateDir, disk ? { ...s, spec: disk.spec, requests: disk.requests } : s);
  }

  /** Saves the spec applied last (and nothing else). */
  async saveSpec(spec: SvcClusterSpec): Promise<void> {
    const s = this.mustState();
    writeState(this.stateDir, { ...s, spec });
  }

  /** Records the last step line (for `local status`). */
  async noteStep(line: string): Promise<void> {
    const s = this.state();
    if (s) this.save(withStepLine(s, line, new Date()));
  }

  async members(): Promise<RuntimeMember[]> {
    const s = this.state();
    if (!s) return [];
    // a data dir seen with a write-ahead log is noted once: emptied later, the member lost its data
    const seen = s.members.filter((m) => !m.hasData && hasWal(m.dataDir));
    if (seen.length > 0) {
      for (const m of seen) m.hasData = true;
      this.save(s);
    }
    return s.members.map((m) => {
      const running = alive(m.pid);
      const failure = running ? undefined : this.failureOf(m);
      const lost = this.lossOf(m, running);
      return {
        name: m.name,
        clientURL: `http://127.0.0.1:${m.clientPort}`,
        configuredVersion: m.version,
        running,
        failure,
        ...(m.revision !== undefined ? { configRevision: m.revision } : {}),
        ...(lost ? { lost } : {}),
        dataLost: !hasData(m.dataDir),
        ...(running && m.forced === true ? { forcedNewCluster: true } : {}),
        ...(m.restartToken !== undefined ? { restartToken: m.restartToken } : {}),
      };
    });
  }

  /**
   * Why member m cannot come back, or undefined: its data dir lost its write-ahead log after it had one, or its last
   * start (one that never served) stopped refused as already bootstrapped (it lost its data) or on corrupt data.
   */
  private lossOf(m: LocalMemberState, running: boolean): MemberLoss | undefined {
    if (m.hasData && !hasWal(m.dataDir)) {
      return { cause: 'DataLost', detail: `its data dir ${m.dataDir} ${existsSync(m.dataDir) ? 'holds no write-ahead log' : 'is missing'}` };
    }
    if (running) return undefined;
    const { header, lines } = lastRun(m.logFile);
    if (!header.startsWith('=== svc start') || lines.some((l) => l.includes('ready to serve client requests'))) return undefined;
    const said = lines.map(readable).filter((l) => /^(error|fatal|panic): /.test(l));
    return said.length > 0 ? lossInLine(said[said.length - 1]) : undefined;
  }

  /**
   * Why a member is not running, from its current process only (never a line of an earlier one): how it ended
   * (when this process started it) and its last telling log line, or that it had started and served before it went.
   */
  private failureOf(m: LocalMemberState): string {
    if (m.pid === undefined) return 'stopped';
    const how = exits.get(m.pid);
    const { header, lines } = lastRun(m.logFile);
    if (header.startsWith('=== svc reset')) return 'stopped for its replacement (fresh data dir)';
    const said = lines.map(readable);
    // its own last error line; after an uncaught exception (Node's stack, then "Node.js vX"), the thrown error's line
    const telling = [...said].reverse().find((l) => /^(error|fatal|panic): /.test(l)) ?? [...said].reverse().find((l) => /^([A-Z]\w*)?Error( \[\w+\])?: /.test(l)) ?? said.at(-1);
    const wayOut = telling ? wayOutOfLine(telling) : undefined;
    const tail = (telling ? `; its last ${telling === said.at(-1) ? '' : 'error '}log line: ${telling.slice(0, 400)}` : '') + (wayOut ? `; ${wayOut}` : '');
    if (lines.some((l) => l.includes('ready to serve client requests'))) {
      return `${how ?? `its process ${m.pid} is gone`} after it had started and served (killed, or crashed)${tail}`;
    }
    return `${how ?? `its process ${m.pid} ended`} while starting${tail}`;
  }

  async createCluster(spec: SvcClusterSpec): Promise<void> {
    if (this.state()) throw new RuntimeError('EXISTS', `a local cluster already exists in ${this.stateDir}`);
    if (!this.name) throw new RuntimeError('NO_CLUSTER', 'a cluster name is needed to create a cluster');
    const ports = await freePorts(spec.replicas * 2);
    const members: LocalMemberState[] = [];
    for (let i = 0; i < spec.replicas; i++) {
      const name = `${this.name}-${i}`;
      members.push({
        name,
        clientPort: ports[2 * i],
        peerPort: ports[2 * i + 1],
        dataDir: join(this.stateDir, 'data', name),
        logFile: join(this.stateDir, 'logs', `${name}.log`),
        version: spec.version,
      });
    }
    const state: LocalState = { name: this.name, spec, token: `${this.name}-${randomBytes(6).toString('hex')}`, createdAt: new Date().toISOString(), members, records: {}, recordsVersion: 0, requests: {} };
    mkdirSync(join(this.stateDir, 'logs'), { recursive: true });
    mkdirSync(join(this.stateDir, 'data'), { recursive: true });
    // before the state names the members: a crash half-way leaves no cluster, and the next try restores again
    if (spec.restore) {
      try {
        await this.restoreMembers(spec.restore.snapshot ?? (this.fetched ?? (await this.fetchRestore(spec.restore, spec, this.name))).file, state);
      } finally {
        // the downloaded restore point served its purpose, or was refused (the bucket still has it)
        if (spec.restore.source) rmSync(join(this.stateDir, 'restore'), { recursive: true, force: true });
        this.fetched = undefined;
      }
    }
    this.save(state);
    for (const m of members) this.spawnMember(state, m);
    this.save(state);
  }

  /**
   * Fills every member's data dir from a snapshot file (a local backup, or any snapshot in the reference's format or
   * an older svc one), with the names, peer URLs and token the members start with. The sha256 is checked first.
   */
  private async restoreMembers(snapshot: string, state: LocalState): Promise<void> {
    const problem = restoreProblem(snapshot);
    if (problem) throw new RuntimeError('START_FAILED', `cannot create ${state.name}: ${problem}`);
    const file = resolve(snapshot);
    const initialCluster = state.members.map((m) => ({ name: m.name, peerURLs: [`http://127.0.0.1:${m.peerPort}`] }));
    for (const m of state.members) {
      rmSync(m.dataDir, { recursive: true, force: true });
      await restoreSnapshot(nopLogger, { snapshotFile: file, dataDir: m.dataDir, name: m.name, initialCluster, initialClusterToken: state.token, advertisePeerURLs: [`http://127.0.0.1:${m.peerPort}`] });
    }
  }

  /** The member's command line: its placement here, its configuration as memberConfig decides it for its release. */
  private args(state: LocalState, m: LocalMemberState): string[] {
    const url = (p: number) => `http://127.0.0.1:${p}`;
    const peerOf = (n: string) => state.members.find((x) => x.name === n)?.peerPort ?? state.reserved?.[n]?.peerPort;
    const cluster = m.join
      ? m.join.map((n) => `${n}=${url(peerOf(n) ?? 0)}`).join(',')
      : state.members.map((x) => `${x.name}=${url(x.peerPort)}`).join(',');
    return memberArgs({
      name: m.name, dataDir: m.dataDir, clientUrl: url(m.clientPort), peerUrl: url(m.peerPort),
      initialCluster: cluster, token: state.token, state: m.join ? 'existing' : 'new',
    }, memberConfig(state.spec, m.version));
  }

  /**
   * The one launcher of this runtime's long-lived processes (members, the backup agent): node running `entry`'s
   * main() with `args`, detached (it outlives this process), its output appended to `logFile` after `header`.
   */
  private spawnDetached(entry: string, args: string[], logFile: string, header: string, env: NodeJS.ProcessEnv, what: string): number {
    appendFileSync(logFile, `${header}\n`);
    const fd = openSync(logFile, 'a');
    try {
      const child = spawn(process.execPath, [...svcNodeArgs(entry), ...args], { detached: true, stdio: ['ignore', fd, fd], env });
      if (child.pid === undefined) throw new RuntimeError('START_FAILED', `cannot start ${what}`);
      const pid = child.pid;
      child.on('exit', (code, signal) => exits.set(pid, signal ? `killed by ${signal}` : `exited with code ${code}`));
      child.unref();
      return pid;
    } finally {
      closeSync(fd);
    }
  }

  /** Starts member m's process (state is saved by the caller); `force`: with --force-new-cluster (forceNewCluster only). */
  private spawnMember(state: LocalState, m: LocalMemberState, force = false): void {
    mkdirSync(m.dataDir, { recursive: true });
    m.pid = this.spawnDetached(this.svcEntry, [...this.args(state, m), ...(force ? ['--force-new-cluster'] : [])], m.logFile,
      `=== svc start ${m.version} ${new Date().toISOString()}`, { ...process.env, ...memberConfig(state.spec, m.version).env }, m.name);
    m.startedAt = new Date().toISOString();
    m.revision = memberConfig(state.spec, m.version).revision;
    // any start answers a restart asked for (the member runs a process begun after the request)
    if (state.requests.restart?.members.includes(m.name)) m.restartToken = state.requests.restart.token;
    if (force) m.forced = true;
    else delete m.forced;
  }

  /** The backup agent's configuration for `svc-operator backup-agent --config` (cli/backup-agent.ts). */
  private agentConfig(state: LocalState): string {
    const b = state.spec.backup ?? {};
    return `${JSON.stringify({
      cluster: state.name,
      endpoints: state.members.map((m) => `http://127.0.0.1:${m.clientPort}`),
      destinations: s3Destinations(state.spec),
      keep: b.keep,
      maxAge: b.maxAge,
      credentialsSecret: b.credentialsSecret,
      release: state.spec.version,
      workDir: join(this.stateDir, 'agent', 'work'),
      statusFile: join(this.stateDir, 'agent', 'status.json'),
    }, null, 2)}\n`;
  }

  /**
   * Runs the backup agent while spec.backup.continuous is on (started when its process is gone, restarted when its
   * configuration changed: members or destinations), stops it otherwise. Returns what it did, or undefined.
   */
  /** The agent as it runs (its process and the configuration it was started with) and as the state says it should. */
  async agent(): Promise<AgentObservation> {
    const state = this.state();
    if (!state) return { running: false };
    const want = state.spec.backup?.continuous === true && state.records.hibernated === undefined && state.members.length > 0;
    return {
      running: alive(state.agent?.pid),
      ...(state.agent?.config !== undefined ? { current: state.agent.config } : {}),
      ...(want ? { wanted: this.agentConfig(state) } : {}),
    };
  }

  async startAgent(): Promise<string> {
    const state = this.mustState();
    const running = alive(state.agent?.pid);
    if (running) await this.stopPid(state.agent!.pid);
    const config = this.agentConfig(state);
    const dir = join(this.stateDir, 'agent');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.json');
    writeFileSync(file, config);
    const pid = this.spawnDetached(OPERATOR_ENTRY, ['backup-agent', '--config', file], this.agentLog(), `=== backup-agent start ${new Date().toISOString()}`, { ...process.env }, 'the backup agent');
    this.save({ ...this.mustState(), agent: { pid, startedAt: new Date().toISOString(), config } });
    return `${running ? 'restarted' : 'started'} the backup agent (pid ${pid}, log ${this.agentLog()})`;
  }

  async stopAgent(): Promise<string> {
    const state = this.mustState();
    await this.stopPid(state.agent?.pid);
    this.save({ ...this.mustState(), agent: {} });
    return 'stopped the backup agent';
  }


  /** The backup agent's log file. */
  agentLog(): string {
    return join(this.stateDir, 'logs', 'backup-agent.log');
  }

  /** What the backup agent last reported (status.backups' continuous fields, and its last error), and whether it runs. */
  agentStatus(): (AgentStatus & { running: boolean; pid?: number }) | undefined {
    const s = this.state();
    if (!s?.agent) return undefined;
    let st: AgentStatus = {};
    try {
      st = JSON.parse(readFileSync(join(this.stateDir, 'agent', 'status.json'), 'utf8')) as AgentStatus;
    } catch {
      // not written yet
    }
    return { ...st, running: alive(s.agent.pid), ...(s.agent.pid !== undefined ? { pid: s.agent.pid } : {}) };
  }

  /** SIGTERM, wait for exit (SIGKILL after the grace period). */
  private async stopPid(pid: number | undefined): Promise<void> {
    if (!alive(pid)) return;
    process.kill(pid!, 'SIGTERM');
    const deadline = Date.now() + this.stopGraceMs;
    while (alive(pid) && Date.now() < deadline) await sleep(50);
    if (alive(pid)) {
      process.kill(pid!, 'SIGKILL');
      while (alive(pid)) await sleep(50);
    }
  }

  async restartMember(name: string, version: string): Promise<void> {
    const state = this.mustState();
    const m = state.members.find((x) => x.name === name);
    if (!m) throw new RuntimeError('NO_MEMBER', `no member ${name}`);
    // Record the release first: after a crash here, the observation shows "configured new, running old",
    // and the planner asks for this restart again.
    m.version = version;
    this.save(state);
    await this.stopPid(m.pid);
    this.spawnMember(state, m);
    this.save(state);
  }

  /**
   * Starts members whose process is gone (after a reboot, or a member that died) with their data; returns their
   * names. A member whose data is lost is not started (the planner replaces it).
   */
  async startStopped(): Promise<string[]> {
    const state = this.state();
    if (!state) return [];
    const started: string[] = [];
    for (const m of state.members) {
      if (alive(m.pid)) continue;
      if (this.lossOf(m, false)) continue;
      this.spawnMember(state, m);
      started.push(m.name);
    }
    if (started.length > 0) this.save(state);
    return started;
  }

  async peerURL(name: string): Promise<string> {
    const state = this.mustState();
    const known = state.members.find((m) => m.name === name) ?? state.reserved?.[name];
    if (known) return `http://127.0.0.1:${known.peerPort}`;
    const [clientPort, peerPort] = await freePorts(2);
    // Recorded before MemberAdd registers the URL: a restarted orchestrator starts the member on these ports.
    this.save({ ...state, reserved: { ...(state.reserved ?? {}), [name]: { clientPort, peerPort } } });
    return `http://127.0.0.1:${peerPort}`;
  }

  memberOfPeerURL(url: string): string | undefined {
    const state = this.state();
    let port: number;
    try {
      port = Number(new URL(url).port);
    } catch {
      return undefined;
    }
    return state?.members.find((m) => m.peerPort === port)?.name ?? Object.entries(state?.reserved ?? {}).find(([, r]) => r.peerPort === port)?.[0];
  }

  async startMember(name: string, initial: string[]): Promise<void> {
    const state = this.mustState();
    let m = state.members.find((x) => x.name === name);
    if (!m) {
      const ports = state.reserved?.[name];
      if (!ports) throw new RuntimeError('NO_MEMBER', `no ports reserved for ${name} (it was never added)`);
      m = {
        name,
        clientPort: ports.clientPort,
        peerPort: ports.peerPort,
        dataDir: join(this.stateDir, 'data', name),
        logFile: join(this.stateDir, 'logs', `${name}.log`),
        version: state.members.at(-1)?.version ?? state.spec.version,
        join: initial,
      };
      // a data dir left by an earlier member of this name would be refused by the cluster
      rmSync(m.dataDir, { recursive: true, force: true });
      const reserved = { ...(state.reserved ?? {}) };
      delete reserved[name];
      state.members.push(m);
      // in ordinal order (after a recovery from a member other than the first, a lower ordinal joins again)
      state.members.sort((a, b) => ordinalOf(a.name) - ordinalOf(b.name));
      state.reserved = reserved;
      this.save(state);
    }
    if (alive(m.pid)) return;
    this.spawnMember(state, m);
    this.save(state);
  }

  async retireMember(name: string): Promise<void> {
    const state = this.mustState();
    const m = state.members.find((x) => x.name === name);
    if (!m) return;
    if (state.members.at(-1) !== m) throw new RuntimeError('NO_MEMBER', `${name} is not the last member`);
    await this.stopPid(m.pid);
    state.members.pop();
    this.save(state);
    rmSync(m.dataDir, { recursive: true, force: true });
  }

  /** Stops the member, empties its data dir and makes its next start join `join` as an existing cluster's member. */
  async resetMember(name: string, initial: string[]): Promise<void> {
    const state = this.mustState();
    const m = state.members.find((x) => x.name === name);
    if (!m) throw new RuntimeError('NO_MEMBER', `no member ${name}`);
    await this.stopPid(m.pid);
    rmSync(m.dataDir, { recursive: true, force: true });
    mkdirSync(m.dataDir, { recursive: true });
    appendFileSync(m.logFile, `=== svc reset for replacement ${new Date().toISOString()}\n`);
    m.join = initial;
    m.hasData = false;
    m.pid = undefined;
    this.save(state);
  }

  async startReplacement(name: string, initial: string[]): Promise<void> {
    await this.startMember(name, initial);
  }

  /** Asks for a quorum-loss recovery (carried out by the loop's next passes); returns the request token. */
  requestRecovery(): string {
    return this.request('recover');
  }

  /**
   * A request the loop's next passes answer (a recovery, a backup, a drill, a restart, maintenance): its token, the
   * time, in the state (`value`: what the field holds besides the token; default the token itself).
   */
  private request<F extends 'recover' | 'backup' | 'verify' | 'restart' | 'maintenance'>(field: F, value?: (token: string) => ClusterRequests[F]): string {
    const token = new Date().toISOString();
    const s = this.mustState();
    writeState(this.stateDir, { ...s, requests: { ...s.requests, [field]: value ? value(token) : token } });
    return token;
  }

  /** Where the survivor's snapshot goes: recovery/<member>-recover-<request>.db (kept by `local delete`). */
  /** The engine streams the survivor's snapshot to recovery/<member>-recover-<request>.db. */
  async takeRecoverySnapshot(step: RecoverSnapshotStep): Promise<StreamTo> {
    return { streamTo: this.recoverySnapshotLocation(step) };
  }

  recoverySnapshotLocation(step: RecoverSnapshotStep): string {
    const dir = join(this.stateDir, 'recovery');
    mkdirSync(dir, { recursive: true });
    return join(dir, `${step.member}-recover-${step.token.replace(/[^0-9A-Za-z-]/g, '-')}.db`);
  }

  async forceNewCluster(survivor: string, lost: string[]): Promise<void> {
    const state = this.mustState();
    const s = state.members.find((m) => m.name === survivor);
    if (!s) throw new RuntimeError('NO_MEMBER', `no member ${survivor} to recover from`);
    for (const name of lost) {
      const m = state.members.find((x) => x.name === name);
      if (!m) continue; // done before a crash, or a member of the list the runtime never ran
      await this.stopPid(m.pid);
      // its ports stay reserved: it joins again later (addMember) under the same name and client URL, empty
      state.members = state.members.filter((x) => x !== m);
      state.reserved = { ...(state.reserved ?? {}), [name]: { clientPort: m.clientPort, peerPort: m.peerPort } };
      this.save(state);
      rmSync(m.dataDir, { recursive: true, force: true });
    }
    if (s.forced === true && alive(s.pid)) return;
    await this.stopPid(s.pid);
    this.spawnMember(state, s, true);
    this.save(state);
  }

  snapshotLocation(from: string, to: string, member: string): string {
    return snapshotPath(join(this.stateDir, 'snapshots'), member, from, to);
  }

  async pruneSnapshots(keep: number): Promise<string[]> {
    const dir = join(this.stateDir, 'snapshots');
    return pruneSnapshotDir(dir, keep).map((f) => join(dir, f));
  }

  async targetRevision(): Promise<TargetRevision | undefined> {
    const s = this.state();
    return s ? { config: memberConfig(s.spec, s.spec.version).revision, ...(s.requests.restart ? { restart: s.requests.restart } : {}) } : undefined;
  }

  /** Sets or clears the break-glass suspension (`local suspend|resume`). */
  setSuspended(on: boolean): void {
    const s = this.mustState();
    const { suspended: _was, ...rest } = s.requests;
    writeState(this.stateDir, { ...s, requests: on ? { ...rest, suspended: true } : rest });
  }

  /** Asks for a rolling restart of `members` (the planner restarts each once, followers first); returns the token. */
  requestRestart(members: string[]): string {
    return this.request('restart', (token) => ({ token, members }));
  }

  async hibernate(members: string[]): Promise<void> {
    const state = this.mustState();
    await this.stopPid(state.agent?.pid);
    for (const m of state.members.filter((x) => members.includes(x.name))) {
      await this.stopPid(m.pid);
      m.pid = undefined;
      this.save(state);
    }
  }

  async wake(): Promise<void> {
    const state = this.mustState();
    for (const m of state.members) {
      if (alive(m.pid)) continue;
      this.spawnMember(state, m);
      this.save(state);
    }
  }

  /** Where scheduled and on-demand backups go. */
  backupDir(): string {
    return join(this.stateDir, 'backups');
  }

  /** The engine streams the leader's snapshot to backups/ (backupLocation). */
  async takeBackup(step: BackupStep): Promise<StreamTo> {
    this.streaming = this.backupLocation(step);
    return { streamTo: this.streaming };
  }

  backupLocation(step: BackupStep): string {
    mkdirSync(this.backupDir(), { recursive: true });
    // named by the slot or the request (an ISO time, `local backup`'s token): a backup taken again after a crash
    // before it was recorded replaces its file instead of leaving one the record does not know
    const at = new Date(step.id);
    return join(this.backupDir(), backupFileFor(dueOfStep(step).kind, step.member, Number.isNaN(at.getTime()) ? new Date() : at));
  }

  /** Files of backups/ the record no longer keeps (spec.backup.keep) are removed; the last failure is over. */
  async backupRecorded(dropped: BackupEntry[]): Promise<void> {
    const s = this.mustState();
    this.streaming = undefined;
    if (s.backupFailure !== undefined) this.save({ ...s, backupFailure: undefined });
    for (const it of dropped) rmSync(it.location, { force: true });
  }

  /**
   * A restore drill, in drill/ under the state dir by this runtime's svc build, of the step's backup file and of the
   * newest restore point of each object-store destination (downloaded and checked first: a corrupt object fails it).
   */
  async verifyBackup(step: VerifyStep): Promise<VerifiedStatus> {
    const outcomes: VerifiedStatus[] = [];
    const b = step.backup;
    if (b) outcomes.push(judgeDrill(b, await runDrill({ snapshotFile: b.location, revision: b.revision, scratchDir: join(this.stateDir, 'drill'), svcEntry: this.svcEntry }), new Date()));
    const s = this.mustState();
    for (const d of s3Destinations(s.spec)) outcomes.push(await this.drillDestination(d.name, d.s3, s.name));
    return outcomes.length > 0 ? combineDrills(outcomes) : noBackupToVerify(new Date());
  }

  /** The drill of a destination's newest restore point of `cluster`. */
  private async drillDestination(name: string, s3: Parameters<typeof openS3>[1], cluster: string): Promise<VerifiedStatus> {
    const failed = (location: string, message: string): VerifiedStatus => ({ time: new Date().toISOString(), location, revision: 0, result: 'Failed', message });
    let dest: OpenDestination;
    try {
      dest = this.openDestination(name, s3);
    } catch (e) {
      return failed(name, (e as Error).message);
    }
    const dir = join(this.stateDir, 'drill-download');
    try {
      const { points } = await listRestorePoints(dest, cluster);
      const point = points.at(-1);
      if (!point) return failed(dest.store.label, `${dest.store.label} holds no restore point of ${cluster} yet: take a backup first`);
      const location = `s3://${s3.bucket}/${point.key}`;
      mkdirSync(dir, { recursive: true });
      let file: string;
      try {
        file = await downloadInto(dest, point, dir);
      } catch (e) {
        return { ...failed(location, `restoring ${location} failed: ${(e as Error).message}`), revision: point.revision };
      }
      const full = judgeDrill(pointEntry(point, location), await runDrill({ snapshotFile: file, revision: point.revision, scratchDir: join(this.stateDir, 'drill'), svcEntry: this.svcEntry }), new Date());
      const chain = await this.drillChain(dest, s3.bucket, points, cluster, { point, file }, dir);
      return chain ? combineDrills([full, chain]) : full;
    } catch (e) {
      return failed(dest.store.label, (e as Error).message);
    } finally {
      dest.store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * The drill of a destination's delta chain up to its newest restorable revision (none without segments past a full
   * snapshot): every segment read and checked, replayed on the full snapshot it follows, and the keyspace there
   * compared with the cluster's (read first: compaction may pass that revision while the replay runs).
   */
  private async drillChain(dest: OpenDestination, bucket: string, points: RestorePoint[], cluster: string, have: { point: RestorePoint; file: string }, dir: string): Promise<VerifiedStatus | undefined> {
    const plan = planRestore(points, await listSegments(dest, cluster), {}, dest.store.label);
    if ('refused' in plan || plan.revision === plan.point.revision) return undefined;
    const m: ChainMeasure = { location: `s3://${bucket}/${plan.point.key}`, base: plan.point.revision, end: plan.revision, segments: plan.segments.length };
    try {
      m.cluster = await this.clusterKeyspace(plan.revision);
      const read: DeltaSegment[] = [];
      for (const ref of plan.segments) read.push(await readSegment(dest, ref));
      const file = plan.point.key === have.point.key ? have.file : await downloadInto(dest, plan.point, dir);
      const r = await drillChain({ snapshot: file, base: plan.point.revision, changes: changesBetween(read, plan.point.revision, plan.revision), scratchDir: join(this.stateDir, 'drill'), svcEntry: this.svcEntry });
      if ('error' in r) m.error = r.error;
      else m.replayed = r;
    } catch (e) {
      m.error = (e as Error).message;
    }
    return judgeChain(m, new Date());
  }

  /** The keyspace hash of this cluster at `revision` (keyspaceHash), or why it cannot tell (compacted past it, unreachable). */
  private async clusterKeyspace(revision: number): Promise<{ hash: string; keys: number } | { unknown: string }> {
    const s = this.mustState();
    const secret = s.spec.backup?.credentialsSecret;
    const auth = secret && this.access ? userCredentials(this.access.secrets, secret) : undefined;
    let client: Client | undefined;
    try {
      client = await Client.connect({ endpoints: s.members.map((m) => `http://127.0.0.1:${m.clientPort}`), commandTimeoutMs: 10_000, ...(auth ? { auth } : {}) });
      return await keyspaceHash(client, revision);
    } catch (e) {
      const message = (e as Error).message;
      return { unknown: /compacted/.test(message) ? `the cluster has compacted its history past revision ${revision}` : `the cluster's keyspace at revision ${revision} could not be read (${message})` };
    } finally {
      client?.close();
    }
  }

  /** Asks for a restore drill of the newest backup (run by the next pass of the loop); returns the request token. */
  requestVerify(): string {
    return this.request('verify');
  }

  /** Opens an S3 destination (the caller closes its store). */
  openDestination(name: string, s3: Parameters<typeof openS3>[1], field?: string): OpenDestination {
    if (!this.access) throw new DestinationError(`"${name}"`, 'NoCredentials', 'this runtime was given no way to open object-store destinations');
    return openS3(name, s3, this.access, field);
  }

  /** Uploads a backup to every S3 destination of the spec with its manifest, then applies retention there. */
  async shipBackup(taken: SnapshotRecord, kind: BackupKind, kv?: { hash: number; compactRevision: number }): Promise<void> {
    const s = this.mustState();
    const dests = s3Destinations(s.spec);
    if (dests.length === 0) return;
    const release = s.members.find((m) => m.name === taken.member)?.version ?? s.spec.version;
    await shipToDestinations(dests, this.mustAccess(), taken.location, {
      cluster: s.name, member: taken.member, revision: taken.revision, time: taken.time, sha256: taken.sha256, size: taken.size, release, backupKind: kind,
      ...(kv ? { hashKV: kv.hash, compactRevision: kv.compactRevision } : {}),
    }, retentionOf(s.spec), new Date());
  }

  /** The spec's S3 destinations that do not take this cluster's backups now (checkDestinations), with the cause. */
  async destinationProblems(): Promise<DestinationError[]> {
    const s = this.mustState();
    const dests = s3Destinations(s.spec);
    return dests.length === 0 ? [] : checkDestinations(dests, this.mustAccess(), s.name);
  }

  private mustAccess(): DestinationAccess {
    if (!this.access) throw new DestinationError('(object store)', 'NoCredentials', 'this runtime was given no way to open object-store destinations');
    return this.access;
  }

  /** The restore points of spec.restore.source, what is in the way (corrupt or foreign objects), and where they are. */
  async restorePoints(restore: RestoreSpec, spec: SvcClusterSpec): Promise<SourcePoints> {
    try {
      return await restoreSourcePoints(restore, spec, this.mustAccess());
    } catch (e) {
      throw e instanceof RestoreSourceError ? new RuntimeError('START_FAILED', e.message) : e;
    }
  }

  /**
   * Picks the restore of spec.restore (restore-points.ts planRestore: the newest full snapshot at or before its revision
   * or time, and with continuous backup the delta segments up to it), downloads the snapshot into restore/ and checks
   * it, and replays the segments' changes into it (a scratch member, then its snapshot); a point the backups do not
   * cover is refused with the covered revisions, before anything is created.
   */
  async fetchRestore(restore: RestoreSpec, spec: SvcClusterSpec, name = this.name ?? 'cluster'): Promise<FetchedRestore> {
    let picked: PickedRestore;
    try {
      picked = await pickRestore(restore, spec, this.mustAccess(), name);
    } catch (e) {
      throw e instanceof RestoreSourceError ? new RuntimeError('START_FAILED', e.message) : e;
    }
    const dest = this.openDestination(picked.source.name, picked.source.s3, picked.source.field);
    const dir = join(this.stateDir, 'restore');
    try {
      mkdirSync(dir, { recursive: true });
      let file = await downloadInto(dest, picked.point, dir);
      if (picked.revision > picked.point.revision) {
        const segments = await Promise.all(picked.segments.map((ref) => readSegment(dest, ref)));
        file = await this.replayed(file, picked.point.revision, changesBetween(segments, picked.point.revision, picked.revision), join(dir, `replayed-${picked.revision}.db`));
      }
      this.fetched = { file, point: picked.point, revision: picked.revision, segments: picked.segments.length, where: picked.where };
      return this.fetched;
    } catch (e) {
      // refused (a corrupt object, a replay that does not add up): nothing of it stays (the bucket still has it all)
      rmSync(dir, { recursive: true, force: true });
      throw e;
    } finally {
      dest.store.close();
    }
  }

  /**
   * The snapshot at `base` with `changes` replayed (delta-replay.ts): a lone scratch member restored from it takes the
   * changes one transaction per revision, and its snapshot is the file the members are restored from.
   */
  private async replayed(snapshot: string, base: number, changes: RevisionChange[], out: string): Promise<string> {
    try {
      return await replayIntoSnapshot({ snapshot, base, changes, scratchDir: join(this.stateDir, 'restore', 'replay'), svcEntry: this.svcEntry, out });
    } catch (e) {
      // the scratch member itself failed: a failed start, as before (a replay that does not add up stays a ReplayError)
      if (e instanceof ScratchMemberError) throw new RuntimeError('START_FAILED', e.message);
      throw e;
    }
  }

  /**
   * Asks for a defragmentation of every member (or `member`), or a compaction (`compact`), carried out by the
   * loop's next passes through the planner's gates; returns the request token. A member not in the cluster is
   * refused (RuntimeError NO_MEMBER), nothing recorded.
   */
  requestMaintenance(action: MaintenanceRequest['action'], member?: string): string {
    const s = this.mustState();
    if (member !== undefined && !s.members.some((m) => m.name === member)) {
      throw new RuntimeError('NO_MEMBER', `no member ${member} in cluster ${s.name} (members: ${s.members.map((m) => m.name).join(', ')})`);
    }
    return this.request('maintenance', (token) => ({ token, action, ...(member !== undefined ? { member } : {}) }));
  }

  /** Asks for an on-demand backup (taken by the next pass of the loop); returns the request token. */
  requestBackup(): string {
    return this.request('backup');
  }

  /**
   * Notes why a scheduled or on-demand backup failed (`local status` shows it until one succeeds); the file it was
   * streamed to, if any, goes (not recorded, it restores nothing the record knows; shipping it may be what failed).
   */
  noteBackupFailure(why: string): void {
    try {
      if (this.streaming) rmSync(this.streaming, { force: true });
    } catch {
      // backups/ is not a folder (any more): no file of it there
    }
    this.streaming = undefined;
    const s = this.state();
    if (s) this.save({ ...s, backupFailure: why });
  }

  async v2DataBytes(member: string): Promise<number | undefined> {
    const m = this.state()?.members.find((x) => x.name === member);
    if (!m) return undefined;
    const dir = join(m.dataDir, 'member', 'snap');
    if (!existsSync(dir)) return 0;
    const snaps = readdirSync(dir).filter((f) => f.endsWith('.snap')).map((f) => statSync(join(dir, f)));
    if (snaps.length === 0) return 0;
    snaps.sort((a, b) => b.mtimeMs - a.mtimeMs);
    return snaps[0].size;
  }

  /**
   * Stops every member and removes the state dir; with `keepBackups` (`local delete`) all but its backups
   * (backups/, snapshots/), which a new cluster may be created from. Returns the folders kept.
   */
  async delete(keepBackups = false): Promise<string[]> {
    const s = this.state();
    if (s) await Promise.all([...s.members.map((m) => m.pid), s.agent?.pid].map((pid) => this.stopPid(pid)));
    const keep = ['backups', 'snapshots', 'recovery'].filter((d) => keepBackups && existsSync(join(this.stateDir, d)) && readdirSync(join(this.stateDir, d)).length > 0);
    if (keep.length === 0) {
      rmSync(this.stateDir, { recursive: true, force: true });
      return [];
    }
    for (const e of readdirSync(this.stateDir)) if (!keep.includes(e)) rmSync(join(this.stateDir, e), { recursive: true, force: true });
    return keep.map((d) => join(this.stateDir, d));
  }
}
