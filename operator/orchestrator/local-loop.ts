// The orchestrator loop of `local apply`, `local run`, the demo, the tests and the bench: the engine's passes
// (engine.ts, the same ones the Kubernetes controller runs, one per reconcile) until the cluster is steady on
// spec.version or the planner says blocked, pausing between passes that wait. With `watch` (local run) it does not
// end there: it reports each settling, reads the spec again before every pass, and goes on until stopped.
import type { SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import { MemberClient } from '../members/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { actionLine, isMutating } from '../planner/steps.js';
import type { ObservedCluster, Step, UpgradeProgress } from '../planner/types.js';
import { Backoff } from './backoff.js';
import { envCrash, newMemory, runPass, type DefragResult } from './engine.js';

/** One reported step. */
export interface StepEvent {
  step: Step;
  /** describeStep(step). */
  line: string;
  /** ms since the epoch. */
  at: number;
  progress?: UpgradeProgress;
  observed: ObservedCluster;
}

export interface ReconcileOptions {
  /** Pause between observations while waiting. Default 300 ms. */
  pollMs?: number;
  /** Give up (outcome "timeout") after this long. Default 10 minutes. */
  timeoutMs?: number;
  /** Called for each new step (repeated identical waits are reported once). */
  onStep?: (e: StepEvent) => void;
  /** Called with the outcome of a restore drill run (passed or failed). */
  onVerified?: (v: VerifiedStatus) => void;
  /** Called for each mutating step carried out. */
  onActed?: (step: Step) => void;
  /** Called when carrying out a step failed (it is retried). */
  onError?: (step: Step, err: Error) => void;
  /** Consecutive failures of steps before giving up (outcome "failed"). Default 8. */
  maxErrors?: number;
  /** A failure that trying again within this run cannot mend: the run ends at once (outcome "failed"). Default: none. */
  fatal?: (step: Step, err: Error) => boolean;
  /** The wait before retrying a failed step (the controller's policy, controller/queue.ts). Default: base 500 ms, at most 60 s. */
  backoff?: Backoff;
  /**
   * Fault injection for tests: "<kind>:<n>" kills this process (SIGKILL) right after the progress of the
   * n-th step of that kind is recorded and before it is carried out; "<kind>:<n>:after" after it is
   * carried out. The CLIs hand in SVC_OPERATOR_CRASH_AT. Default: none.
   */
  crashAt?: string;
  /** Called for each member defragmented (its bytes before and after). */
  onDefrag?: (d: DefragResult) => void;
  /** Called with what the runtime said it did, where it says more than the step's line (PassResult.done). */
  onDone?: (line: string) => void;
  /** Member client to use (closed by the caller). Default: a new one, closed at the end. */
  client?: MemberClient;
  /** Keep reconciling after the cluster settles (no timeout), until `signal` aborts: `local run`. */
  watch?: WatchOptions;
}

/** The long-running form of the loop. */
export interface WatchOptions {
  /** Ends the loop once the pass under way is done (the step it carries out is finished and recorded). */
  signal: AbortSignal;
  /** The spec to reconcile toward, read before every pass; undefined ends the loop (outcome stopped, the cluster is gone). */
  spec: () => SvcClusterSpec | undefined;
  /** Called before every pass (the local runtime starts members whose process is gone). */
  beforePass?: (spec: SvcClusterSpec) => Promise<void>;
  /**
   * Called after each pass that settles (steady, blocked, suspended, or failing maxErrors times in a row or more);
   * `passAt` is when that pass read the spec. Its actions, snapshots and defrags are those since the last call.
   */
  onSettled?: (r: ReconcileResult, passAt: number) => void;
  /** Pause between passes of a settled cluster (schedules are looked at this often). Default 1 s. */
  idleMs?: number;
}

/** How reconcile ended. */
export interface ReconcileResult {
  /**
   * suspended: a person suspended reconciling (break-glass); the step it holds back is in `step`'s reason.
   * stopped (watch only): the signal aborted, or the cluster is gone.
   */
  outcome: 'steady' | 'blocked' | 'suspended' | 'timeout' | 'failed' | 'stopped';
  /** The last step planned. */
  step: Step;
  progress?: UpgradeProgress;
  /** Snapshots taken during this run. */
  snapshots: SnapshotRecord[];
  /** Mutating steps carried out, in order ("restartMember m1 3.4.34", ...). */
  actions: string[];
  /** Members defragmented during this run, with their database file's bytes before and after. */
  defrags: DefragResult[];
  error?: string;
}

/** Sleeps `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

/** Drives the runtime's cluster to `spec` by the engine's passes, until steady, blocked, timed out or failing. */
export async function reconcile(runtime: Runtime, spec: SvcClusterSpec, opts: ReconcileOptions = {}): Promise<ReconcileResult> {
  const pollMs = opts.pollMs ?? 300;
  const watch = opts.watch;
  const deadline = watch ? Infinity : Date.now() + (opts.timeoutMs ?? 600_000);
  const maxErrors = opts.maxErrors ?? 8;
  const backoff = opts.backoff ?? new Backoff();
  const client = opts.client ?? new MemberClient();
  const memory = newMemory();
  const crash = envCrash(opts.crashAt);
  let snapshots: SnapshotRecord[] = [];
  let actions: string[] = [];
  let defrags: DefragResult[] = [];
  let lastLine = '';
  let errors = 0;
  let last: Step | undefined;
  /** The end of a run, or (watch) a settling reported, the next pass after a pause; undefined: go on. */
  const settle = async (r: Omit<ReconcileResult, 'snapshots' | 'actions' | 'defrags'>, passAt: number): Promise<ReconcileResult | undefined> => {
    const result = { ...r, snapshots, actions, defrags };
    if (!watch) return result;
    watch.onSettled?.(result, passAt);
    snapshots = [];
    actions = [];
    defrags = [];
    await sleep(r.outcome === 'failed' ? backoff.delay(errors) : watch.idleMs ?? 1000, watch.signal);
    return undefined;
  };
  try {
    for (;;) {
      if (watch?.signal.aborted) return { outcome: 'stopped', step: last ?? { kind: 'wait', code: 'Paused', reason: 'stopped before a pass' }, snapshots, actions, defrags };
      const passAt = Date.now();
      const current = watch ? watch.spec() : spec;
      if (!current) return { outcome: 'stopped', step: last ?? { kind: 'wait', code: 'Paused', reason: 'no cluster' }, snapshots, actions, defrags, error: 'the cluster is gone (its state file was removed)' };
      await watch?.beforePass?.(current);
      const r = await runPass(runtime, current, client, memory, { crash });
      const { step, line, progress } = r;
      last = step;
      if (line !== lastLine) {
        lastLine = line;
        opts.onStep?.({ step, line, at: Date.now(), progress, observed: r.observed });
      }
      let ended: ReconcileResult | undefined;
      if (step.kind === 'steady' || step.kind === 'hibernated') ended = await settle({ outcome: 'steady', step, progress }, passAt);
      else if (step.kind === 'wait' && step.code === 'Suspended') ended = await settle({ outcome: 'suspended', step, progress }, passAt);
      else if (step.kind === 'blocked') ended = await settle({ outcome: 'blocked', step, progress }, passAt);
      else {
        if (r.error) {
          errors++;
          opts.onError?.(step, r.error);
          lastLine = '';
          if (errors >= maxErrors || opts.fatal?.(step, r.error)) {
            ended = await settle({ outcome: 'failed', step, progress, error: r.error.message }, passAt);
            if (ended) return ended;
            continue;
          }
        } else if (r.acted) {
          errors = 0;
          if (r.snapshot) snapshots.push(r.snapshot);
          if (r.verified) opts.onVerified?.(r.verified);
          if (r.done) opts.onDone?.(r.done);
          if (r.defrag) {
            defrags.push(r.defrag);
            opts.onDefrag?.(r.defrag);
          }
          if (isMutating(step)) {
            actions.push(actionLine(step));
            opts.onActed?.(step);
          }
          continue; // the next step follows from a new observation, at once
        }
        if (Date.now() > deadline) return { outcome: 'timeout', step, progress, snapshots, actions, defrags, error: `gave up after ${opts.timeoutMs ?? 600_000} ms: ${line}` };
        await sleep(r.error ? backoff.delay(errors) : r.pending ? Math.min(r.pending.retryMs, pollMs) : pollMs, watch?.signal);
        continue;
      }
      if (ended) return ended;
      if (step.kind === 'steady' || step.kind === 'hibernated') errors = 0;
    }
  } finally {
    if (!opts.client) client.close();
  }
}
