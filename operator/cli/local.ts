// `svc-operator local apply|status|backup|verify-backup|delete`: an SvcCluster on this machine, driven by the orchestrator.
import { describeDefrag } from '../planner/maintenance.js';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { parseSvcCluster, updateProblems, ValidationError } from '../api/validate.js';
import { API_VERSION, KIND, type BackupsStatus, type SvcCluster } from '../api/types.js';
import type { AgentStatus } from '../runtime/backup-agent.js';
import { backupsState, DEFAULT_KEEP } from '../backup/schedule.js';
import { describeVerified } from '../backup/verify.js';
import { MemberClient } from '../members/index.js';
import { observe, reconcile, type ReconcileResult } from '../orchestrator/index.js';
import { LocalRuntime, restoreProblem } from '../runtime/local/index.js';
import { RuntimeError } from '../runtime/index.js';
import { DestinationError, userCredentials, type DestinationAccess } from '../backup/destinations/index.js';
import { backupSources, listBackups, namedMembers, printBackups } from './backups-view.js';
import { Backoff } from '../orchestrator/backoff.js';
import { observedClusterVersion } from '../planner/plan.js';
import { quorumLoss } from '../planner/healing.js';
import { hexMemberId } from '../api/member-id.js';
import { describeStep } from '../planner/steps.js';
import { StepPrinter } from './printer.js';
import { UsageError } from './args.js';
import { CodedError } from '../../server/coded-error.js';

/** Raised when a command fails (exit code 1). */
export class CommandError extends CodedError<'FAILED'> {
  constructor(message: string) {
    super('FAILED', message);
  }
}

/** Reads and validates an SvcCluster manifest (YAML or JSON; the first document). */
export function readManifest(file: string): SvcCluster {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = loadAll(text).find((d) => d !== null && d !== undefined);
  } catch (e) {
    throw new CommandError(`${file}: not valid YAML: ${(e as Error).message}`);
  }
  try {
    return parseSvcCluster(doc);
  } catch (e) {
    if (e instanceof ValidationError) throw new CommandError(`${file}: ${e.message}`);
    throw e;
  }
}

/** The svc entry the local runtime runs: SVC_OPERATOR_SVC_ENTRY, else (undefined) the same build's. */
export function envSvcEntry(): string | undefined {
  return process.env.SVC_OPERATOR_SVC_ENTRY;
}

/**
 * How the local runtime opens object-store destinations: a credentialsSecret (or caSecret) is the folder
 * <secrets dir>/<name>/ with one file per key (as Kubernetes mounts a Secret), the secrets dir SVC_OPERATOR_SECRETS_DIR
 * or ~/.config/svc-operator/secrets; a destination without one uses AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
 * (and AWS_SESSION_TOKEN). Nothing else of the environment (no instance metadata service).
 */
export function envDestinationAccess(): DestinationAccess {
  const dir = process.env.SVC_OPERATOR_SECRETS_DIR || join(homedir(), '.config', 'svc-operator', 'secrets');
  const id = process.env.AWS_ACCESS_KEY_ID;
  const secret = process.env.AWS_SECRET_ACCESS_KEY;
  const token = process.env.AWS_SESSION_TOKEN;
  return {
    secrets: (name, key) => {
      try {
        return readFileSync(join(dir, name, key), 'utf8').trim() || undefined;
      } catch {
        return undefined;
      }
    },
    secretsWhere: (secret) => `the folder ${join(dir, secret)}/ (SVC_OPERATOR_SECRETS_DIR)`,
    ...(id && secret ? { defaultCredentials: { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) } } : {}),
  };
}

/** The local runtime of a state dir, as every `local` command opens it. */
export function localRuntime(stateDir: string, name?: string): LocalRuntime {
  return new LocalRuntime({ stateDir, name, svcEntry: envSvcEntry(), destinations: envDestinationAccess() });
}

export interface ApplyOptions {
  stateDir: string;
  printer?: StepPrinter;
  svcEntry?: string;
  timeoutMs?: number;
  pollMs?: number;
  /** Fault injection (SVC_OPERATOR_CRASH_AT): see ReconcileOptions.crashAt. */
  crashAt?: string;
  /** The retry policy of a failing step; default the loop's (0.5 s doubling to 60 s). */
  backoff?: Backoff;
}

/**
 * Makes the manifest so on this machine: creates the cluster, or (same name, new spec.version) upgrades it
 * by the planner's steps. Resolves with the orchestrator's result.
 */
export async function applyCluster(cluster: SvcCluster, opts: ApplyOptions): Promise<ReconcileResult> {
  const runtime = new LocalRuntime({ stateDir: opts.stateDir, name: cluster.metadata.name, svcEntry: opts.svcEntry, destinations: envDestinationAccess() });
  const state = runtime.state();
  const printer = opts.printer;
  if (state) {
    if (state.name !== cluster.metadata.name) throw new CommandError(`${runtime.stateDir} holds cluster "${state.name}", not "${cluster.metadata.name}"; use another --state-dir`);
    const problems = updateProblems(state.spec, cluster.spec);
    if (problems.length > 0) throw new CommandError(`cannot apply: ${problems.join('; ')}`);
    // a suspended cluster is not touched; a hibernated one is woken by the planner (spec.replicas above 0)
    if (state.requests.suspended !== true && state.records.hibernated === undefined && cluster.spec.replicas > 0) {
      const started = await runtime.startStopped();
      if (started.length > 0) printer?.line(`started stopped member(s): ${started.join(', ')}`);
    }
    await runtime.saveSpec(cluster.spec);
  } else if (cluster.spec.replicas === 0) {
    throw new CommandError(`cannot create ${cluster.metadata.name} with spec.replicas 0: 0 hibernates an existing cluster; a new one needs 1, 3, 5 or 7 members`);
  } else if (cluster.spec.restore?.snapshot !== undefined) {
    // refused before anything is created (the loop would retry a missing or corrupt file in vain)
    const problem = restoreProblem(cluster.spec.restore.snapshot);
    if (problem) throw new CommandError(`cannot create ${cluster.metadata.name}: ${problem}`);
  } else if (cluster.spec.restore?.source) {
    // the point picked, downloaded and checked before anything is created (createCluster finds it in restore/)
    try {
      const f = await runtime.fetchRestore(cluster.spec.restore, cluster.spec);
      printer?.line(`restoring from ${f.point.key} of ${f.where}: revision ${f.point.revision}, taken ${f.point.time} from ${f.point.member}${f.revision > f.point.revision ? `; ${f.segments} delta segment(s) replayed to revision ${f.revision}` : ''}`);
    } catch (e) {
      if (e instanceof RuntimeError || e instanceof DestinationError) throw new CommandError(e.message.startsWith('cannot create') ? e.message : `cannot create ${cluster.metadata.name}: ${e.message}`);
      throw e;
    }
  }
  // a cluster with authentication on: its backups are taken as the user of spec.backup.credentialsSecret
  const client = backupClient(cluster.spec);
  try {
    const r = await reconcile(runtime, cluster.spec, {
      client,
      timeoutMs: opts.timeoutMs,
      pollMs: opts.pollMs,
      crashAt: opts.crashAt,
      backoff: opts.backoff,
      onStep: (e) => {
        printer?.step(e);
        void runtime.noteStep(e.line);
      },
      onDefrag: (d) => printer?.line(describeDefrag(d)),
      // (spec.backup.continuous: the backup agent's pid and log, as it was started)
      onDone: (line) => printer?.line(line),
      onVerified: (v) => printer?.line(v.result === 'Passed' ? `restore drill passed: ${v.message}` : `WARNING restore drill FAILED: ${v.message}`),
      onError: (step, err) => {
        printer?.line(`step ${step.kind} failed (will retry): ${err.message}`);
        if (step.kind === 'backup') runtime.noteBackupFailure(backupFailureLine(err.message, runtime.stateDir));
      },
    });
    return r;
  } finally {
    client.close();
  }
}

/**
 * The member client of a local apply: backups (snapshots, HashKV) as the user of spec.backup.credentialsSecret when
 * the spec names one (the files username and password in the secrets folder); a missing one is refused here.
 */
function backupClient(spec: SvcCluster['spec']): MemberClient {
  const secret = spec.backup?.credentialsSecret;
  if (!secret) return new MemberClient();
  const access = envDestinationAccess();
  const backupAuth = userCredentials(access.secrets, secret);
  if (!backupAuth) throw new CommandError(`spec.backup.credentialsSecret ${secret} has no username and password in ${access.secretsWhere!(secret)}; create them (a user with the root role)`);
  return new MemberClient({ backupAuth });
}

/** A failed scheduled or on-demand backup: the cause and the way out. */
function backupFailureLine(cause: string, stateDir: string): string {
  return `${cause}; it is tried again by the next \`svc-operator local apply\` or \`svc-operator local backup --wait --state-dir ${stateDir}\` (the leader must be healthy; its log is under ${stateDir}/logs)`;
}

/** `local apply -f FILE`. Returns the exit code. */
export async function localApply(file: string, stateDir: string, output: string | undefined): Promise<number> {
  const cluster = readManifest(file);
  const printer = output === 'json' ? undefined : new StepPrinter();
  const r = await applyCluster(cluster, { stateDir, printer, svcEntry: envSvcEntry(), crashAt: process.env.SVC_OPERATOR_CRASH_AT });
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify({ outcome: r.outcome, step: r.step, progress: r.progress, snapshots: r.snapshots, actions: r.actions, error: r.error }, null, 2)}\n`);
  }
  if (r.outcome === 'steady') return 0;
  const why = r.step.kind === 'blocked' ? `${r.step.condition} (${r.step.code}): ${r.step.reason}` : r.error ?? describeStep(r.step);
  process.stderr.write(`svc-operator: ${cluster.metadata.name} not reconciled: ${why}\n`);
  return 1;
}

/** `local status`. */
export async function localStatus(stateDir: string, output: string | undefined): Promise<number> {
  const runtime = localRuntime(stateDir);
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}`);
  const client = new MemberClient({ timeoutMs: 2000, attempts: 1 });
  const agent = runtime.agentStatus();
  try {
    const { cluster, urls } = await observe(runtime, client);
    const quorum = quorumLoss(cluster);
    const members = cluster.members.map((m) => ({
      name: m.name,
      release: m.release ?? null,
      configuredVersion: m.configuredVersion,
      leader: m.leader,
      healthy: m.healthy,
      endpoint: urls.get(m.name),
      appliedIndex: m.appliedIndex ?? null,
      failure: m.failure ?? null,
      learner: cluster.clusterMembers?.some((c) => c.member === m.name && c.isLearner) ?? false,
      // why it cannot come back (the next `local apply` replaces it), and its last replacement
      lost: m.lost ?? null,
      replaced: state.records.replacements?.[m.name] ?? null,
    }));
    const out = {
      name: state.name,
      specVersion: state.spec.version,
      clusterVersion: observedClusterVersion(cluster) ?? null,
      members,
      upgrade: state.records.progress ?? null,
      lastStep: state.lastStep ?? null,
      // the record as stored, with the next scheduled time as of now
      backups: { ...backupsState({ name: state.name, where: runtime.backupDir(), spec: state.spec, previous: state.records.backups, created: new Date(state.createdAt), now: new Date() }), ...continuousFields(agent) },
      backupAgent: agent ? { running: agent.running, pid: agent.pid ?? null, lastError: agent.lastError ?? null, log: runtime.agentLog() } : null,
      backupRequested: state.requests.backup !== undefined && state.requests.backup !== state.records.backups?.lastRequest ? state.requests.backup : null,
      backupFailure: state.backupFailure ?? null,
      verifyRequested: state.requests.verify !== undefined && state.requests.verify !== state.records.backups?.lastVerifyRequest ? state.requests.verify : null,
      recovery: state.records.recovery ?? null,
      // the planner's verdict (a lost member is then not replaced: recover is the way out)
      quorumLost: quorum?.message ?? null,
      // break-glass
      suspended: state.requests.suspended === true,
      hibernated: state.records.hibernated !== undefined,
      restartRequest: state.requests.restart ?? null,
    };
    if (output === 'json') {
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      return 0;
    }
    const rows = [['NAME', 'RELEASE', 'LEADER', 'HEALTH', 'ENDPOINT'], ...members.map((m) => [m.name, m.release ?? `(${m.configuredVersion}, down)`, m.leader ? '*' : '', m.healthy ? 'healthy' : 'unhealthy', m.endpoint ?? ''])];
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    process.stdout.write(`cluster ${out.name}: spec.version ${out.specVersion}, cluster version ${out.clusterVersion ?? 'unknown'}\n`);
    for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()}\n`);
    const p = state.records.progress;
    if (p) {
      const st = p.finishedAt !== undefined ? `complete at ${new Date(p.finishedAt).toISOString()}` : `in progress, step ${p.step}`;
      process.stdout.write(`upgrade ${p.from} -> ${p.to}: ${st}; members done: ${p.membersDone.join(', ') || 'none'}\n`);
      if (p.snapshot) process.stdout.write(`snapshot: ${p.snapshot.location} (${p.snapshot.size} bytes, revision ${p.snapshot.revision}, sha256 ${p.snapshot.sha256.slice(0, 16)}…)\n`);
    }
    if (out.suspended) process.stdout.write(`suspended (break-glass): nothing is changed until \`svc-operator local resume ${state.name}\`\n`);
    if (out.hibernated) process.stdout.write(`hibernated: every member stopped, data kept; a manifest with spec.replicas above 0 wakes them\n`);
    if (state.lastStep) process.stdout.write(`last step: ${state.lastStep}\n`);
    if (quorum) process.stdout.write(`${quorum.message}\n`);
    for (const m of members) {
      if (m.learner) process.stdout.write(`${m.name}: a learner, promoted once caught up\n`);
      if (m.lost) process.stdout.write(`${m.name} cannot come back (${m.lost.cause}: ${m.lost.detail}): ${quorum ? 'the quorum is lost, so it is not replaced; `svc-operator local recover --dry-run` is the way out' : 'the next `svc-operator local apply` replaces it'}\n`);
      else if (m.failure) process.stdout.write(`${m.name} not running: ${m.failure}\n`);
      const r = m.replaced;
      if (r) process.stdout.write(`${m.name} replaced (${r.cause}) at ${new Date(r.startedAt).toISOString()}: id ${hexMemberId(r.oldId)} -> ${r.newId !== undefined ? hexMemberId(r.newId) : '(being added)'}${r.finishedAt === undefined ? ', under way' : ''}\n`);
    }
    const b = out.backups;
    const items = b.items ?? [];
    process.stdout.write(`backups in ${b.claim}: ${items.length === 0 ? 'none' : items.length}${state.spec.backup?.schedule ? `; schedule "${state.spec.backup.schedule}", next ${b.nextScheduleTime ?? 'never'}` : ''}\n`);
    if (items.length > 0) {
      const brows = [['KIND', 'TIME', 'REVISION', 'BYTES', 'FILE'], ...[...items].reverse().map((i) => [i.kind, i.time, String(i.revision), String(i.size), i.location])];
      const bw = brows[0].map((_, i) => Math.max(...brows.map((r) => r[i].length)));
      for (const r of brows) process.stdout.write(`${r.map((c, i) => c.padEnd(bw[i])).join('  ').trimEnd()}\n`);
    }
    if (out.backupRequested) process.stdout.write(`on-demand backup requested (${out.backupRequested}): the next \`svc-operator local apply\` (or \`local backup --wait\`) takes it\n`);
    if (out.backupFailure) process.stdout.write(`last backup failed: ${out.backupFailure}\n`);
    if (agent) {
      process.stdout.write(`continuous backup: agent ${agent.running ? `running (pid ${agent.pid})` : 'not running (the next `svc-operator local apply` starts it)'}; durable to revision ${b.continuousRevision ?? 'none yet'}${b.continuousTime ? ` (${b.continuousTime})` : ''}; log ${runtime.agentLog()}\n`);
      if (b.continuousFull) process.stdout.write(`continuous backup: new full snapshot at revision ${b.continuousFull.revision} (${b.continuousFull.time}): ${b.continuousFull.reason}\n`);
      if (agent.lastError) process.stdout.write(`continuous backup: last error: ${agent.lastError}\n`);
    }
    const v = b.lastVerified;
    process.stdout.write(`last restore drill: ${v ? describeVerified(v) : 'none'}${b.nextVerifyTime ? `; next ${b.nextVerifyTime}` : ''}\n`);
    if (out.verifyRequested) process.stdout.write(`restore drill requested (${out.verifyRequested}): the next \`svc-operator local apply\` (or \`local verify-backup --wait\`) runs it\n`);
    const rec = state.records.recovery;
    if (rec) {
      const where = rec.finishedAt !== undefined ? `finished ${new Date(rec.finishedAt).toISOString()}` : `under way, step ${rec.step} (\`svc-operator local recover --state-dir ${stateDir}\` resumes it)`;
      process.stdout.write(`recovery ${rec.token} from ${rec.survivor}: ${where}${rec.snapshot ? `; snapshot ${rec.snapshot.location}` : ''}\n`);
    }
    return 0;
  } finally {
    client.close();
  }
}

/** status.backups' continuous fields from what the agent reported. */
function continuousFields(a: AgentStatus | undefined): Pick<BackupsStatus, 'continuousRevision' | 'continuousTime' | 'continuousFull'> {
  if (!a) return {};
  return {
    ...(a.continuousRevision !== undefined ? { continuousRevision: a.continuousRevision } : {}),
    ...(a.continuousTime !== undefined ? { continuousTime: a.continuousTime } : {}),
    ...(a.continuousFull !== undefined ? { continuousFull: a.continuousFull } : {}),
  };
}

/**
 * `local backup [--wait]`: asks for an on-demand backup (a request token in the state file). With --wait, runs the
 * loop until the cluster is steady, the backup taken and recorded; without it, says how it gets taken and seen.
 */
export async function localBackup(stateDir: string, wait: boolean, output: string | undefined): Promise<number> {
  const runtime = localRuntime(stateDir);
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}; create one with \`svc-operator local apply -f <cluster.yaml> --state-dir ${stateDir}\``);
  const token = runtime.requestBackup();
  if (!wait) {
    process.stdout.write(`on-demand backup requested (${token}); the next \`svc-operator local apply\` takes it, or now: \`svc-operator local backup --wait --state-dir ${stateDir}\`; \`svc-operator local status --state-dir ${stateDir}\` lists the backups\n`);
    return 0;
  }
  const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: state.name }, spec: state.spec };
  // someone waits at the terminal: a backup failing again and again says so within seconds (8 tries, 0.2 s doubling
  // to 1 s) rather than after the loop's minute of backoff
  const r = await applyCluster(cluster, { stateDir, printer: output === 'json' ? undefined : new StepPrinter(), svcEntry: envSvcEntry(), crashAt: process.env.SVC_OPERATOR_CRASH_AT, backoff: new Backoff(200, 1000) });
  const after = runtime.state();
  const answered = after?.records.backups?.lastRequest === token;
  const taken = answered ? after.records.backups!.items?.filter((i) => i.kind === 'on-demand').at(-1) : undefined;
  if (output === 'json') process.stdout.write(`${JSON.stringify({ request: token, backup: taken ?? null, outcome: r.outcome, error: r.error ?? null }, null, 2)}\n`);
  else if (taken) process.stdout.write(`on-demand backup of ${taken.member} at ${taken.location}: revision ${taken.revision}, ${taken.size} bytes, sha256 ${taken.sha256}\n`);
  // (taken, then removed by spec.backup.keep for scheduled backups whose slots passed in the same run)
  else if (answered) process.stdout.write(`on-demand backup ${token} taken; spec.backup.keep (${state.spec.backup?.keep ?? DEFAULT_KEEP}) has since removed it for newer scheduled backups taken in the same run\n`);
  if (answered) return 0;
  const why = r.step.kind === 'blocked' ? `${r.step.condition} (${r.step.code}): ${r.step.reason}` : r.error ?? describeStep(r.step);
  process.stderr.write(`svc-operator: on-demand backup ${token} of ${state.name} not taken: ${why}${after?.backupFailure ? `\n${after.backupFailure}` : ''}\n`);
  return 1;
}

/**
 * `local verify-backup [--wait]`: asks for a restore drill of the newest backup (a request token in the state file).
 * With --wait, runs the loop until it ran and was recorded; exit 1 when it failed or did not run.
 */
export async function localVerifyBackup(stateDir: string, wait: boolean, output: string | undefined): Promise<number> {
  const runtime = new LocalRuntime({ stateDir, svcEntry: envSvcEntry() });
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}; create one with \`svc-operator local apply -f <cluster.yaml> --state-dir ${stateDir}\``);
  const token = runtime.requestVerify();
  if (!wait) {
    process.stdout.write(`restore drill requested (${token}); the next \`svc-operator local apply\` runs it, or now: \`svc-operator local verify-backup --wait --state-dir ${stateDir}\`; \`svc-operator local status --state-dir ${stateDir}\` shows the last drill\n`);
    return 0;
  }
  const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: state.name }, spec: state.spec };
  const r = await applyCluster(cluster, { stateDir, printer: output === 'json' ? undefined : new StepPrinter(), svcEntry: envSvcEntry(), crashAt: process.env.SVC_OPERATOR_CRASH_AT });
  const b = runtime.state()?.records.backups;
  const v = b?.lastVerifyRequest === token ? b.lastVerified : undefined;
  if (output === 'json') process.stdout.write(`${JSON.stringify({ request: token, verified: v ?? null, outcome: r.outcome, error: r.error ?? null }, null, 2)}\n`);
  if (v?.result === 'Passed') return 0;
  if (v) {
    process.stderr.write(`svc-operator: restore drill of ${state.name} FAILED: ${v.message}\n`);
    return 1;
  }
  const why = r.step.kind === 'blocked' ? `${r.step.condition} (${r.step.code}): ${r.step.reason}` : r.error ?? describeStep(r.step);
  process.stderr.write(`svc-operator: restore drill ${token} of ${state.name} did not run: ${why}\n`);
  return 1;
}

/** `local delete`: the members and the state go; backups stay (a new cluster may be created from one). */
export async function localDelete(stateDir: string): Promise<number> {
  const runtime = localRuntime(stateDir);
  if (!runtime.state()) throw new CommandError(`no local cluster in ${runtime.stateDir}`);
  const kept = await runtime.delete(true);
  process.stdout.write(`deleted the local cluster in ${runtime.stateDir}${kept.length > 0 ? `; kept its backups in ${kept.join(', ')} (spec.restore.snapshot may name one; remove them with rm -r)` : ''}\n`);
  return 0;
}

/**
 * `local backups`: the restore points of every object-store destination of the cluster (each full snapshot; the
 * oldest and newest restorable revision and time), and what is there that is not one. With `-f FILE` (no cluster
 * needed: before a restore) those of the manifest's spec.restore.source and its destinations. Exit 1 when a
 * destination cannot be listed.
 */
export async function localBackups(stateDir: string, output: string | undefined, file?: string): Promise<number> {
  const runtime = localRuntime(stateDir);
  const manifest = file !== undefined ? readManifest(file) : undefined;
  const state = runtime.state();
  if (!manifest && !state) throw new CommandError(`no local cluster in ${runtime.stateDir}; or name a manifest: svc-operator local backups -f <cluster.yaml>`);
  const name = manifest?.metadata.name ?? state!.name;
  const spec = manifest?.spec ?? state!.spec;
  const listed = await listBackups(name, backupSources(name, spec, manifest !== undefined), (restore) => runtime.restorePoints(restore, spec));
  // the agent's older snapshots name the member's client host:port: by name, as the members of this state dir are
  const out = namedMembers(listed, new Map((state?.name === name ? state.members : []).map((m) => [`127.0.0.1:${m.clientPort}`, m.name])));
  printBackups((s) => process.stdout.write(s), name, out, output, `${name} has no object-store destinations (spec.backup.destinations[].s3${manifest ? ' or spec.restore.source.s3' : ''}); its local backups: svc-operator local status --state-dir ${stateDir}`);
  return out.some((l) => l.error) ? 1 : 0;
}
