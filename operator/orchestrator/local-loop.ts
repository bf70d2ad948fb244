// The orchestrator loop of `local apply`, the demo, the tests and the bench: the engine's passes (engine.ts, the
// same ones the Kubernetes controller runs, one per reconcile) until the cluster is steady on spec.version or
// the planner says blocked, pausing between passes that wait.
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
}

/** How reconcile ended. */
export interface ReconcileResult {
  /** suspended: a person suspended reconciling (break-glass); the step it holds back is in `step`'s reason. */
  outcome: 'steady' | 'blocked' | 'suspended' | 'timeout' | 'failed';
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Drives the runtime's cluster to `spec` by the engine's passes, until steady, blocked, timed out or failing. */
export async function reconcile(runtime: Runtime, spec: SvcClusterSpec, opts: ReconcileOptions = {}): Promise<ReconcileResult> {
  const pollMs = opts.pollMs ?? 300;
  const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
  const maxErrors = opts.maxErrors ?? 8;
  const backoff = opts.backoff ?? new Backoff();
  const client = opts.client ?? new MemberClient();
  const memory = newMemory();
  const crash = envCrash(opts.crashAt);
  const snapshots: SnapshotRecord[] = [];
  const actions: string[] = [];
  const defrags: DefragResult[] = [];
  let lastLine = '';
  let errors = 0;
  try {
    for (;;) {
      const r = await runPass(runtime, spec, client, memory, { crash });
      const { step, line, progress } = r;
      if (line !== lastLine) {
        lastLine = line;
        opts.onStep?.({ step, line, at: Date.now(), progress, observed: r.observed });
      }
      if (step.kind === 'steady' || step.kind === 'hibernated') return { outcome: 'steady', step, progress, snapshots, actions, defrags };
      if (step.kind === 'wait' && step.code === 'Suspended') return { outcome: 'suspended', step, progress, snapshots, actions, defrags };
      if (step.kind === 'blocked') return { outcome: 'blocked', step, progress, snapshots, actions, defrags };
      if (r.error) {
        errors++;
        opts.onError?.(step, r.error);
        lastLine = '';
        if (errors >= maxErrors || opts.fatal?.(step, r.error)) return { outcome: 'failed', step, progress, snapshots, actions, defrags, error: r.error.message };
      } else if (r.acted) {
        errors = 0;
        if (r.snapshot) snapshots.push(r.snapshot);
        if (r.verified) opts.onVerified?.(r.verified);
        if (r.done) opts.onDone?.(r.done);
        if (r.defrag) {
          defrags.push(r.defrag);
          opts.onDefrag?.(r.defrag);
        }
        if (isMutating(step)) actions.push(actionLine(step));
        continue; // the next step follows from a new observation, at once
      }
      if (Date.now() > deadline) return { outcome: 'timeout', step, progress, snapshots, actions, defrags, error: `gave up after ${opts.timeoutMs ?? 600_000} ms: ${line}` };
      await sleep(r.error ? backoff.delay(errors) : r.pending ? Math.min(r.pending.retryMs, pollMs) : pollMs);
    }
  } finally {
    if (!opts.client) client.close();
  }
}
