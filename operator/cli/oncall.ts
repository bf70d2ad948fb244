// The on-call verbs of `svc-operator local` (the same names as `kubectl svc`): suspend, resume, move-leader,
// restart, alarm list|disarm, report. Each decides on an observation by the planner's rules (planner/oncall.ts,
// the planner's gate and its suspension), refuses naming the cause with nothing touched, and takes --dry-run,
// which prints what would be done and changes nothing. ONCALL_VERBS is the one table of them: a verb added later
// (defrag, compact) is a row here and appears in the usage, the dispatch and the completion scripts.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { quotaBytes } from '../api/maintenance.js';
import { API_VERSION, KIND, type SvcCluster } from '../api/types.js';
import { MemberClient } from '../members/index.js';
import { observe } from '../orchestrator/index.js';
import { disarmDecision, moveLeaderDecision, restartDecision } from '../planner/oncall.js';
import { hexMemberId } from '../api/member-id.js';
import { describeStep } from '../planner/steps.js';
import type { ObservedCluster, Step } from '../planner/types.js';
import { LocalRuntime } from '../runtime/local/index.js';
import type { LocalState } from '../runtime/local/state.js';
import type { FlagSpec } from './args.js';
import { UsageError } from './args.js';
import { applyCluster, CommandError, envSvcEntry } from './local.js';
import { StepPrinter } from './printer.js';
import { tarArchive } from './tar.js';
import { upgradePlanText } from './upgrade-plan.js';

/** What a local verb gets: its words after the verb, its flags, where the cluster is. */
export interface LocalVerbInput {
  /** The positional words after `local <verb>` (the cluster name first). */
  args: string[];
  flags: Map<string, string>;
  stateDir: string;
  dryRun: boolean;
  out: (s: string) => void;
}

/** One on-call verb. */
export interface OnCallVerb {
  /** The verb as typed (`alarm` takes a sub-verb). */
  name: string;
  /** Its arguments after the verb, for the usage. */
  usage: string;
  /** One line saying what it does. */
  summary: string;
  /** Its flags besides --state-dir (local) or -n/--kubeconfig (kubectl). */
  flags: FlagSpec;
  /** It changes the cluster (a read-only verb takes --dry-run too: it says what it would write and writes nothing). */
  mutating: boolean;
  /** How it runs under `svc-operator local`. */
  local: (i: LocalVerbInput) => Promise<number>;
}

/** The local cluster of `stateDir`, checked to be the one named. */
function openLocal(stateDir: string, name: string | undefined, verb: string): { runtime: LocalRuntime; state: LocalState } {
  if (name === undefined) throw new UsageError(`local ${verb} needs the cluster's name`);
  const runtime = new LocalRuntime({ stateDir, svcEntry: envSvcEntry() });
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}; name its state dir with --state-dir`);
  if (state.name !== name) throw new CommandError(`${runtime.stateDir} holds cluster "${state.name}", not "${name}"; name its state dir with --state-dir`);
  return { runtime, state };
}

async function observeLocal(runtime: LocalRuntime, client: MemberClient): Promise<{ cluster: ObservedCluster; urls: Map<string, string> }> {
  const r = await observe(runtime, client);
  if (runtime.state()?.requests.suspended === true) r.cluster.suspended = true;
  return r;
}

function extraArgs(args: string[], max: number, verb: string): void {
  if (args.length > max) throw new UsageError(`local ${verb}: unexpected arguments: ${args.slice(max).join(' ')}`);
}

const suspend = (on: boolean) => async (i: LocalVerbInput): Promise<number> => {
  const verb = on ? 'suspend' : 'resume';
  extraArgs(i.args, 1, verb);
  const { runtime, state } = openLocal(i.stateDir, i.args[0], verb);
  const now = state.requests.suspended === true;
  if (now === on) {
    i.out(`${state.name} is already ${on ? 'suspended' : 'not suspended'}; nothing to do\n`);
    return 0;
  }
  if (i.dryRun) {
    i.out(`dry run: would ${verb} ${state.name}; nothing was changed\n`);
    return 0;
  }
  runtime.setSuspended(on);
  i.out(on
    ? `${state.name} suspended: no member is started, stopped, restarted or changed until \`svc-operator local resume ${state.name} --state-dir ${i.stateDir}\`; \`local status\` keeps reading it, \`local apply\` records a new spec and says what it holds back\n`
    : `${state.name} resumed: the next \`svc-operator local apply\` carries on with what was held back\n`);
  return 0;
};

async function moveLeader(i: LocalVerbInput): Promise<number> {
  extraArgs(i.args, 1, 'move-leader');
  const { runtime, state } = openLocal(i.stateDir, i.args[0], 'move-leader');
  const client = new MemberClient({ timeoutMs: 3000, attempts: 2 });
  let step: Step;
  try {
    const d = moveLeaderDecision((await observeLocal(runtime, client)).cluster, i.flags.get('to'));
    if ('refused' in d) throw new CommandError(`cannot move the leader of ${state.name}: ${d.refused}`);
    step = d.step;
  } finally {
    client.close();
  }
  if (step.kind !== 'moveLeader') throw new Error(`unexpected step ${step.kind}`);
  if (i.dryRun) {
    i.out(`dry run: would ${describeStep(step)}; nothing was changed\n`);
    return 0;
  }
  // the request names the member decided here: the planner moves leadership there through its gate
  runtime.requestMaintenance('move-leader', step.to);
  return carryOut(i, state, `${describeStep(step)}: ${step.to} leads`, 'the leadership move');
}

async function restart(i: LocalVerbInput): Promise<number> {
  extraArgs(i.args, 2, 'restart');
  const { runtime, state } = openLocal(i.stateDir, i.args[0], 'restart');
  const client = new MemberClient({ timeoutMs: 3000, attempts: 2 });
  let members: string[];
  try {
    const { cluster } = await observeLocal(runtime, client);
    const d = restartDecision(cluster, i.args[1]);
    if ('refused' in d) throw new CommandError(`cannot restart ${i.args[1] ?? state.name}: ${d.refused}`);
    members = d.members;
  } finally {
    client.close();
  }
  if (i.dryRun) {
    i.out(`dry run: would restart ${members.join(', ')} one at a time (followers first, the leader last after moving leadership; each once every member is healthy and caught up; reason RestartRequested); nothing was changed\n`);
    return 0;
  }
  runtime.requestRestart(members);
  return carryOut(i, state, `restarted ${members.join(', ')}`, `the restart of ${members.join(', ')}`);
}

/** Once a request is recorded: the planner carries it out through its gates (a local apply of the recorded spec). */
async function carryOut(i: LocalVerbInput, state: LocalState, done: string, what: string): Promise<number> {
  const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: state.name }, spec: state.spec };
  const r = await applyCluster(cluster, { stateDir: i.stateDir, printer: new StepPrinter({ write: i.out }), svcEntry: envSvcEntry() });
  // (a destination found failing after the run: what was asked for is done, the backups are not)
  if (r.outcome === 'steady' || (r.backupsFailing && r.step.kind !== 'backup')) {
    i.out(`${done}\n`);
    if (r.backupsFailing) throw new CommandError(`${state.name} is as applied, but ${r.backupsFailing}`);
    return 0;
  }
  throw new CommandError(`${what} did not finish: ${r.error ?? describeStep(r.step)}; run \`svc-operator local apply\` to carry on`);
}

/**
 * `local defrag <cluster> [MEMBER]` and `local compact <cluster>`: a maintenance request (planner/maintenance.ts)
 * carried out at once by the planner, through its gates (every member healthy under one leader and caught up).
 */
function maintenance(action: 'defrag' | 'compact') {
  return async (i: LocalVerbInput): Promise<number> => {
    extraArgs(i.args, action === 'defrag' ? 2 : 1, action);
    const { runtime, state } = openLocal(i.stateDir, i.args[0], action);
    const member = action === 'defrag' ? i.args[1] : undefined;
    if (member !== undefined && !state.members.some((m) => m.name === member)) {
      throw new CommandError(`cannot defragment ${member}: no member ${member} in cluster ${state.name} (members: ${state.members.map((m) => m.name).join(', ')}); nothing was changed`);
    }
    const what = action === 'defrag'
      ? `defragment ${member ?? 'every member'}${member ? '' : ' one at a time (followers first, the leader last after moving leadership)'}, once every member is healthy and caught up`
      : 'compact the history up to the leader\'s revision, keeping what spec.maintenance.autoCompaction keeps';
    if (i.dryRun) {
      i.out(`dry run: would ${what}; nothing was changed\n`);
      return 0;
    }
    runtime.requestMaintenance(action, member);
    return carryOut(i, state, action === 'defrag' ? `defragmented ${member ?? 'every member'}` : 'compacted', `the ${action === 'defrag' ? 'defragmentation' : 'compaction'}`);
  };
}

async function alarm(i: LocalVerbInput): Promise<number> {
  const sub = i.args[0];
  if (sub !== 'list' && sub !== 'disarm') throw new UsageError('local alarm needs list or disarm, then the cluster\'s name');
  extraArgs(i.args, 2, `alarm ${sub}`);
  const { runtime, state } = openLocal(i.stateDir, i.args[1], `alarm ${sub}`);
  const client = new MemberClient({ timeoutMs: 3000, attempts: 2 });
  try {
    const { cluster, urls } = await observeLocal(runtime, client);
    const names = cluster.members.map((m) => m.name);
    const answering = cluster.members.filter((m) => m.running).map((m) => urls.get(m.name)!);
    let alarms: Array<{ memberId: string; alarm: string }> | undefined;
    for (const u of answering) {
      alarms = await client.alarms(u).catch(() => undefined);
      if (alarms) break;
    }
    if (!alarms) throw new CommandError(`no member of ${state.name} answered the alarm list; \`svc-operator local status\` shows which members run`);
    const byId = (id: string) => cluster.members.find((m) => m.id === id)?.name ?? (id === '0' ? 'the cluster' : `member ${hexMemberId(id)}`);
    if (sub === 'list') {
      i.out(alarms.length === 0 ? `no alarm raised in ${state.name}\n` : alarms.map((a) => `${a.alarm}\t${byId(a.memberId)}\n`).join(''));
      return 0;
    }
    const dbSizes: Record<string, number> = {};
    const dbSizesInUse: Record<string, number> = {};
    const hashes: Record<string, number> = {};
    const revisions: number[] = [];
    for (const m of cluster.members) {
      const s = await client.status(urls.get(m.name)!).catch(() => undefined);
      if (s) {
        dbSizes[m.name] = s.dbSize;
        if (s.dbSizeInUse !== undefined) dbSizesInUse[m.name] = s.dbSizeInUse;
        revisions.push(s.revision);
      }
    }
    if (alarms.some((a) => a.alarm === 'CORRUPT') && revisions.length > 0) {
      const rev = Math.min(...revisions);
      for (const m of cluster.members) {
        const h = await client.hashKV(urls.get(m.name)!, rev).catch(() => undefined);
        if (h) hashes[m.name] = h.hash;
      }
    }
    const d = disarmDecision({ alarms, dbSizes, dbSizesInUse, hashes, quotaBytes: quotaBytes(state.spec), members: names });
    if ('refused' in d) throw new CommandError(`cannot disarm in ${state.name}: ${d.refused}`);
    if (i.dryRun) {
      i.out(`dry run: would disarm ${d.disarm.map((a) => `${a.alarm} (${byId(a.memberId)})`).join(', ')}; nothing was changed\n`);
      return 0;
    }
    await runtime.noteStep(`disarm ${d.disarm.map((a) => a.alarm).join(', ')} (asked for)`);
    for (const a of d.disarm) await client.disarmAlarm(answering[0], a.memberId, a.alarm);
    i.out(`disarmed ${d.disarm.map((a) => `${a.alarm} (${byId(a.memberId)})`).join(', ')}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** The last `n` lines of a file ('' when it cannot be read). */
function tail(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-n - 1).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${(e as Error).message})\n`;
  }
}

/** events.txt of a local report: a line per step line recorded (its time, the line), oldest first. */
export function stepEvents(state: LocalState): string {
  const history = state.stepHistory ?? (state.lastStep ? [{ time: '(time not recorded)', line: state.lastStep }] : []);
  return history.length === 0 ? '(no step recorded)\n' : history.map((h) => `${h.time}  ${h.line}\n`).join('');
}

/** Log lines kept per member (and of the operator) in a report. */
export const REPORT_LOG_LINES = 500;

async function report(i: LocalVerbInput): Promise<number> {
  extraArgs(i.args, 1, 'report');
  const { runtime, state } = openLocal(i.stateDir, i.args[0], 'report');
  const file = resolve(i.flags.get('file') ?? `${state.name}-report-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  const client = new MemberClient({ timeoutMs: 3000, attempts: 1 });
  const entries: Array<{ name: string; data: string }> = [];
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  try {
    const { cluster, urls } = await observeLocal(runtime, client);
    const manifest: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: state.name }, spec: state.spec };
    entries.push({ name: 'cluster.json', data: json(manifest) });
    entries.push({ name: 'state.json', data: json(state) });
    entries.push({ name: 'observed.json', data: json(cluster) });
    // the local runtime's Events: the step lines the operator reported, with their times (Kubernetes reports carry the Events)
    entries.push({ name: 'events.txt', data: stepEvents(state) });
    for (const m of state.members) {
      const url = urls.get(m.name)!;
      const [version, status, alarms] = await Promise.all([
        client.version(url).catch((e: Error) => ({ error: e.message })),
        client.status(url).catch((e: Error) => ({ error: e.message })),
        client.alarms(url).catch((e: Error) => ({ error: e.message })),
      ]);
      entries.push({ name: `members/${m.name}.json`, data: json({ record: m, observed: cluster.members.find((o) => o.name === m.name), version, status, alarms }) });
      entries.push({ name: `logs/${m.name}.log`, data: tail(m.logFile, REPORT_LOG_LINES) });
    }
    // the local operator is this command line: its log is the step line recorded last, in events.txt
    entries.push({ name: 'logs/operator.log', data: `${state.lastStep ?? ''}\n` });
  } finally {
    client.close();
  }
  if (i.dryRun) {
    i.out(`dry run: would write ${file}: ${entries.length} entries (${entries.map((e) => e.name).join(', ')}); nothing was written\n`);
    return 0;
  }
  writeFileSync(file, gzipSync(tarArchive(entries)));
  i.out(`${file}: ${entries.length} entries (${entries.map((e) => e.name).join(', ')})\n`);
  return 0;
}

/** `local upgrade-plan <cluster> [--to VERSION]`: the hops and the checks, from one observation; never acts. */
async function upgradePlan(i: LocalVerbInput): Promise<number> {
  extraArgs(i.args, 1, 'upgrade-plan');
  const { runtime, state } = openLocal(i.stateDir, i.args[0], 'upgrade-plan');
  const client = new MemberClient({ timeoutMs: 3000, attempts: 2 });
  try {
    const { cluster } = await observeLocal(runtime, client);
    const r = upgradePlanText(state.name, state.spec, cluster, state.records.progress, i.flags.get('to'));
    i.out(r.text);
    return r.ok ? 0 : 1;
  } finally {
    client.close();
  }
}

/** The on-call verbs, in usage order. */
export const ONCALL_VERBS: readonly OnCallVerb[] = [
  { name: 'suspend', usage: '<cluster>', summary: 'break-glass: no mutation of the cluster until resume (status keeps flowing)', flags: {}, mutating: true, local: suspend(true) },
  { name: 'resume', usage: '<cluster>', summary: 'ends a suspension: what was held back carries on', flags: {}, mutating: true, local: suspend(false) },
  { name: 'move-leader', usage: '<cluster> [--to MEMBER]', summary: 'hands leadership to MEMBER (else the most up-to-date follower), only while every member is healthy and caught up', flags: { string: ['to'] }, mutating: true, local: moveLeader },
  { name: 'restart', usage: '<cluster> [MEMBER]', summary: 'a rolling restart (reason RestartRequested) of every member or one, followers first, the leader last', flags: {}, mutating: true, local: restart },
  { name: 'defrag', usage: '<cluster> [MEMBER]', summary: 'defragments every member (or one) through the planner: followers first, the leader last after moving leadership', flags: {}, mutating: true, local: maintenance('defrag') },
  { name: 'compact', usage: '<cluster>', summary: 'compacts the history, keeping what spec.maintenance.autoCompaction keeps', flags: {}, mutating: true, local: maintenance('compact') },
  { name: 'alarm', usage: 'list|disarm <cluster>', summary: 'lists the alarms raised; disarm is refused while a cause persists', flags: {}, mutating: true, local: alarm },
  { name: 'upgrade-plan', usage: '<cluster> [--to VERSION]', summary: 'the hops from the release the members run to VERSION (else spec.version) and the checks each begins with; exit 1 when one refuses; changes nothing', flags: { string: ['to'] }, mutating: false, local: upgradePlan },
  { name: 'report', usage: '<cluster> [--file F.tar.gz]', summary: 'one archive for a bug report: the resource, status, Events, each member\'s status, the last logs', flags: { string: ['file'] }, mutating: false, local: report },
];

/** The verb of `name`, if it is one. */
export function onCallVerb(name: string | undefined): OnCallVerb | undefined {
  return ONCALL_VERBS.find((v) => v.name === name);
}

/** Usage lines of the verbs under `prefix` ("svc-operator local", "kubectl svc"). */
export function onCallUsage(prefix: string, suffix: string): string {
  return ONCALL_VERBS.map((v) => `  ${prefix} ${v.name} ${v.usage} ${suffix} [--dry-run]\n      ${v.summary}\n`).join('');
}
