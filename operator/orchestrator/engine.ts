// The one engine: a single pass of observe -> plan -> record (write-ahead) -> act, for any runtime. `local apply`
// loops over passes; the Kubernetes controller runs one pass per reconcile and requeues. A pass never sleeps
// waiting for the cluster: what takes time (a member restarting, leadership moving, a Job running) shows as a
// wait in the next pass's observation, or as a StepPending from the runtime, and the caller decides when to look
// again. Everything needed to resume is recorded through the runtime before it is acted on, so a new engine
// (a restarted operator) picks up from the observation and the record; EngineMemory only saves repeated work.
import type { BackupEntry, BackupKind, SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import { dueOfStep } from '../backup/schedule.js';
import { can, StepPending, type Runtime, type StreamTo } from '../runtime/runtime.js';
import { plan } from '../planner/plan.js';
import { describeStep, isMutating } from '../planner/steps.js';
import { noteObserved, noteSteady, observeRecords, recordAfter, recordBefore, type ClusterRecords, type RecordsDocument, type StepOutcome } from '../planner/records.js';
import type { MaintenanceReason, ObservedCluster, RecoveryProgress, RolloutProgress, Step, UpgradeProgress } from '../planner/types.js';
import { executeHealing } from './heal.js';
import type { MemberApi } from './member-api.js';
import { observe } from './observe.js';
import { executeScaling } from './scale.js';

/** How long after a MoveLeader the engine waits for the old leader to report that it stepped down. */
export const LEADER_MOVE_WAIT_MS = 10_000;

/** Where a crash may be injected: after the step is recorded, after it is carried out, after its result is recorded. */
export type CrashPoint = 'before' | 'acted' | 'after';

/** Per-cluster memory of one engine (one process). Losing it (a crash) costs nothing but repeated reads. */
export interface EngineMemory {
  /** Steps carried out per kind (numbers the crash points). */
  counts: Map<string, number>;
  /** The step left under way by the last pass (StepPending) and its number: looking again is not a new step. */
  pending?: { line: string; n: number };
  /** The leader's applied index at the last pass: the write rate is measured across passes (seconds apart). */
  leaderIndex?: { index: number; at: number };
  /** A MoveLeader sent and not yet seen: the old leader may report leadership for a moment longer. */
  leaderMove?: { from: string; to: string; until: number };
}

export function newMemory(): EngineMemory {
  return { counts: new Map() };
}

export interface PassHooks {
  /**
   * Fault injection: called at each crash point with the step kind and its number in this engine. None by
   * default; `envCrash(spec)` makes the hook of SVC_OPERATOR_CRASH_AT (read by the CLIs in operator/cli/).
   */
  crash?(kind: string, n: number, at: CrashPoint): void;
  /** The clock (tests). Default Date.now. */
  clock?: () => number;
  /** Observe and plan only: nothing is recorded or carried out (`local run --dry-run`). */
  dryRun?: boolean;
}

/** What one pass did. */
export interface PassResult {
  step: Step;
  /** describeStep(step). */
  line: string;
  progress?: UpgradeProgress;
  observed: ObservedCluster;
  /** The rollout of a configuration or certificate change, as recorded. */
  rollout?: RolloutProgress;
  /** A mutating (or `complete`) step was carried out without error. */
  acted: boolean;
  /** The step was begun and is under way (a Job running...): look again after pending.retryMs. */
  pending?: StepPending;
  /** Carrying out the step failed (it is planned again from a new observation). */
  error?: Error;
  /** A snapshot taken and recorded in this pass. */
  snapshot?: SnapshotRecord;
  /** A scheduled or on-demand backup taken and recorded in this pass. */
  backup?: BackupEntry;
  /** The recovery record as saved in this pass (begun, its snapshot, finished). */
  recovery?: RecoveryProgress;
  /** The record document as this pass left it. */
  records: ClusterRecords;
  /** A restore drill run and recorded in this pass (Passed or Failed). */
  verified?: VerifiedStatus;
  /** A member defragmented in this pass: its database file's bytes before and after (the Event and the metric). */
  defrag?: DefragResult;
  /** What the runtime said it did, where it says more than the step's line (the backup agent's pid and log). */
  done?: string;
}

/** One defragmentation carried out. */
export interface DefragResult {
  member: string;
  reason: MaintenanceReason;
  before?: number;
  after?: number;
}

/**
 * The crash hook of a SVC_OPERATOR_CRASH_AT value ("<kind>:<n>[:acted|:after]"), which SIGKILLs the process there;
 * undefined or empty: none. The value is handed in: the environment is read in operator/cli/ only.
 */
export function envCrash(spec: string | undefined): PassHooks['crash'] {
  if (!spec) return undefined;
  const [k, n, w] = spec.split(':');
  return (kind, count, at) => {
    if (k === kind && Number(n) === count && (w ?? 'before') === at) {
      process.stderr.write(`svc-operator: fault injection: killing the orchestrator at ${kind} #${count} (${at})\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  };
}

/**
 * A snapshot the engine streamed goes on to the runtime's object-store destinations (shipBackup), with the leader's
 * KV hash at its revision for the manifest (none when the member cannot tell: the backup still counts).
 */
async function ship(runtime: Runtime, client: MemberApi, url: string, taken: SnapshotRecord, kind: BackupKind): Promise<void> {
  if (!runtime.shipBackup) return;
  const kv = await client.hashKV?.(url, taken.revision).catch(() => undefined);
  await runtime.shipBackup(taken, kind, kv);
}

/** True when the runtime left a snapshot to the engine. */
function streamed<T extends object>(taken: T | StreamTo): taken is StreamTo {
  return 'streamTo' in taken;
}

/** The record document, written when `records` differ from what it holds (same object: unchanged). */
async function write(runtime: Runtime, doc: RecordsDocument, records: ClusterRecords): Promise<void> {
  if (records === doc.records) return;
  doc.version = await runtime.records.save(records, doc.version);
  doc.records = records;
}

/** One pass over the cluster of `runtime` toward `spec`. */
export async function runPass(runtime: Runtime, spec: SvcClusterSpec, client: MemberApi, memory: EngineMemory, hooks: PassHooks = {}): Promise<PassResult> {
  const doc = await runtime.records.load();
  // suspended: not even the runtime's own objects are brought in line (that is a mutation too)
  if (doc.requests.suspended !== true && !hooks.dryRun) await runtime.prepare?.();
  const { cluster: observed, urls } = await observe(runtime, client, hooks.clock);
  // The write rate over the time since the last pass (the reading inside one observation spans milliseconds).
  const c = observed.catchUp;
  const last = memory.leaderIndex;
  if (c && last && observed.now - last.at >= 200 && observed.now - last.at <= 120_000 && c.leaderIndex >= last.index) {
    c.ratePerSecond = Math.round(((c.leaderIndex - last.index) * 1000) / (observed.now - last.at));
  }
  memory.leaderIndex = c ? { index: c.leaderIndex, at: observed.now } : undefined;
  // what the observation shows is recorded with the step's own record (one write), or alone when nothing acts
  let records = noteObserved(doc.records, observed);
  observeRecords(observed, { ...doc, records });
  let step = plan(spec, observed, records.progress);
  // A MoveLeader just sent: until the old leader says it is a follower, the same move is not sent again.
  const move = memory.leaderMove;
  if (move && step.kind === 'moveLeader' && step.from === move.from && observed.now < move.until) {
    step = { kind: 'wait', code: 'LeaderMoving', reason: `leadership is moving from ${move.from} to ${move.to}; waiting for ${move.from} to step down` };
  } else if (move && !observed.members.some((m) => m.leader && m.name === move.from)) {
    memory.leaderMove = undefined;
  }
  const result = (extra: Partial<PassResult> = {}): PassResult => ({ step, line: describeStep(step), progress: doc.records.progress, rollout: doc.records.rollout, records: doc.records, observed, acted: false, ...extra });

  if (hooks.dryRun) return result();
  if (step.kind === 'steady') records = noteSteady(records, step.version, observed.now);
  if (!isMutating(step) && step.kind !== 'complete' && step.kind !== 'recoverComplete') {
    await write(runtime, doc, records);
    return result();
  }

  // Write-ahead: the records first (one write), then the act.
  const line = describeStep(step);
  const n = memory.pending?.line === line ? memory.pending.n : (memory.counts.get(step.kind) ?? 0) + 1;
  memory.counts.set(step.kind, n);
  memory.pending = undefined;
  await write(runtime, doc, recordBefore(records, step, observed, spec));
  if (doc.records.replacements) observed.replacements = doc.records.replacements;
  const progress = doc.records.progress;
  const crash = hooks.crash;
  crash?.(step.kind, n, 'before');
  let defrag: DefragResult | undefined;
  let done: string | undefined;
  let snapshot: SnapshotRecord | undefined;
  let backup: BackupEntry | undefined;
  let verified: VerifiedStatus | undefined;
  try {
    switch (step.kind) {
      case 'createCluster':
        await runtime.createCluster(spec);
        break;
      case 'snapshot':
        snapshot = runtime.takeSnapshot
          ? await runtime.takeSnapshot(step, progress!)
          : await client.snapshot(urls.get(step.member)!, step.member, runtime.snapshotLocation(step.from, step.to, step.member));
        if (!runtime.takeSnapshot) await ship(runtime, client, urls.get(step.member)!, snapshot, 'pre-upgrade');
        break;
      case 'backup': {
        // named by the slot or token it answers: looked at again (StepPending), or taken again after a crash
        // before it was recorded (the planner still finds it due)
        if (!can(runtime, 'backups')) throw new Error(`the ${runtime.kind} runtime takes no backups`);
        const taken = await runtime.takeBackup(step);
        if (!streamed(taken)) backup = taken;
        else {
          backup = { ...(await client.snapshot(urls.get(step.member)!, step.member, taken.streamTo)), kind: dueOfStep(step).kind };
          await ship(runtime, client, urls.get(step.member)!, backup, backup.kind);
        }
        break;
      }
      case 'verifyBackup':
        // reads a backup only; named by the slot or request it answers, so run again after a crash before it was recorded
        if (!can(runtime, 'drills')) throw new Error(`the ${runtime.kind} runtime cannot run restore drills`);
        verified = await runtime.verifyBackup(step);
        break;
      case 'moveLeader': {
        const toId = step.toId ?? observed.members.find((m) => m.name === step.to)?.id;
        if (!toId) throw new Error(`no id known for member ${step.to}`);
        await client.moveLeader(urls.get(step.from)!, toId);
        memory.leaderMove = { from: step.from, to: step.to, until: (hooks.clock ?? Date.now)() + LEADER_MOVE_WAIT_MS };
        break;
      }
      case 'restartMember':
        await runtime.restartMember(step.member, step.version);
        break;
      case 'addMember':
      case 'startMember':
      case 'removeMember':
      case 'retireMember':
        await executeScaling(runtime, client, step, urls, observed);
        break;
      case 'replaceMember':
      case 'promoteMember':
        await executeHealing(runtime, client, step, urls, observed);
        break;
      case 'recoverSnapshot': {
        // named by the request: taken again after a crash before it was recorded (the planner asks again)
        if (!can(runtime, 'recovery')) throw new Error(`the ${runtime.kind} runtime cannot recover a cluster`);
        const taken = await runtime.takeRecoverySnapshot(step);
        snapshot = streamed(taken) ? await client.snapshot(urls.get(step.member)!, step.member, taken.streamTo) : taken;
        break;
      }
      case 'forceNewCluster':
        if (!can(runtime, 'recovery')) throw new Error(`the ${runtime.kind} runtime cannot recover a cluster`);
        await runtime.forceNewCluster(step.member, step.lost);
        break;
      case 'endForceNewCluster':
        // a plain restart: the runtime starts a member with --force-new-cluster only from forceNewCluster
        await runtime.restartMember(step.member, step.version);
        break;
      case 'disarmAlarm':
        // idempotent: disarming an alarm no longer raised changes nothing
        if (!client.disarmAlarm) throw new Error('this member client cannot disarm alarms');
        await client.disarmAlarm(urls.get(step.member)!, step.memberId, step.alarm);
        break;
      case 'hibernate':
        if (!can(runtime, 'hibernation')) throw new Error(`the ${runtime.kind} runtime cannot hibernate`);
        await runtime.hibernate(step.members);
        break;
      case 'wake':
        if (!can(runtime, 'hibernation')) throw new Error(`the ${runtime.kind} runtime cannot wake members`);
        await runtime.wake();
        break;
      case 'compact':
        if (!client.compact) throw new Error('this member client cannot compact');
        await client.compact(urls.get(step.member)!, step.revision);
        break;
      case 'defragMember': {
        if (!client.defragment) throw new Error('this member client cannot defragment');
        const url = urls.get(step.member)!;
        // out of the client Service's endpoints while its backend is rewritten (Kubernetes), back in after
        await runtime.setServing?.(step.member, false);
        try {
          await client.defragment(url);
        } finally {
          await runtime.setServing?.(step.member, true);
        }
        const before = observed.members.find((m) => m.name === step.member)?.dbSize;
        const after = (await client.status(url).catch(() => undefined))?.dbSize;
        defrag = { member: step.member, reason: step.reason, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
        break;
      }
      case 'expandVolumes':
        if (!can(runtime, 'volumes')) throw new Error(`the ${runtime.kind} runtime has no volumes to grow`);
        await runtime.expandVolumes(step.size, step.members);
        break;
      case 'startBackupAgent':
      case 'stopBackupAgent':
        if (!can(runtime, 'continuous')) throw new Error(`the ${runtime.kind} runtime runs no backup agent`);
        done = step.kind === 'startBackupAgent' ? await runtime.startAgent() : await runtime.stopAgent();
        break;
      case 'complete':
      case 'recoverComplete':
      case 'steady':
      case 'hibernated':
      case 'wait':
      case 'blocked':
        break; // nothing to carry out (wait and blocked return before the act, steady earlier still)
      default: {
        // a kind of the step table with no act here does not compile
        const unhandled: never = step;
        throw new Error(`no act for step ${(unhandled as Step).kind}`);
      }
    }
  } catch (e) {
    if (e instanceof StepPending) {
      memory.pending = { line, n };
      return result({ pending: e });
    }
    return result({ error: e as Error });
  }
  crash?.(step.kind, n, 'acted');
  const outcome: StepOutcome = { now: (hooks.clock ?? Date.now)(), ...(snapshot ? { snapshot } : {}), ...(backup ? { backup } : {}), ...(verified ? { verified } : {}), ...(defrag?.after !== undefined ? { defragAfter: defrag.after } : {}) };
  const before = doc.records;
  await write(runtime, doc, recordAfter(before, step, outcome, spec, doc.cluster));
  if (snapshot && step.kind === 'snapshot') await runtime.pruneSnapshots(spec.backup?.keep ?? 3);
  if (backup && can(runtime, 'backups') && runtime.backupRecorded) {
    const kept = new Set((doc.records.backups?.items ?? []).map((i) => i.location));
    await runtime.backupRecorded([...(before.backups?.items ?? []), backup].filter((i) => !kept.has(i.location)));
  }
  crash?.(step.kind, n, 'after');
  const recovery = doc.records.recovery;
  return result({ acted: true, snapshot, backup, ...(verified ? { verified } : {}), ...(recovery ? { recovery } : {}), ...(defrag ? { defrag } : {}), ...(done ? { done } : {}) });
}
