// The orchestrator: observe, plan, record, act, repeat, until the cluster is steady on spec.version or the
// planner says blocked. One code path for `local apply`, the demo, the tests and the bench. Progress is
// saved through the runtime BEFORE each mutating step (write-ahead), so a killed orchestrator resumes.
import type { SnapshotRecord, SvcClusterSpec } from '../api/types.js';
import { MemberClient } from '../members/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { plan } from '../upgrade/plan.js';
import { beginStep, noteMembersDone, recordSnapshot, settle } from '../upgrade/progress.js';
import { describeStep, isMutating, isScalingStep, type ObservedCluster, type Step, type UpgradeProgress } from '../upgrade/types.js';
import { observe } from './observe.js';
import { executeScaling } from './scale.js';

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
  /** Called when carrying out a step failed (it is retried). */
  onError?: (step: Step, err: Error) => void;
  /** Consecutive failures of steps before giving up (outcome "failed"). Default 8. */
  maxErrors?: number;
  /**
   * Fault injection for tests: "<kind>:<n>" kills this process (SIGKILL) right after the progress of the
   * n-th step of that kind is recorded and before it is carried out; "<kind>:<n>:after" after it is
   * carried out. Default: env SVC_OPERATOR_CRASH_AT.
   */
  crashAt?: string;
  /** Member client to use (closed by the caller). Default: a new one, closed at the end. */
  client?: MemberClient;
}

/** How reconcile ended. */
export interface ReconcileResult {
  outcome: 'steady' | 'blocked' | 'timeout' | 'failed';
  /** The last step planned. */
  step: Step;
  progress?: UpgradeProgress;
  /** Snapshots taken during this run. */
  snapshots: SnapshotRecord[];
  /** Mutating steps carried out, in order ("restartMember m1 3.4.34", ...). */
  actions: string[];
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function crashCheck(spec: string | undefined, kind: string, count: number, when: 'before' | 'after'): void {
  if (!spec) return;
  const [k, n, w] = spec.split(':');
  if (k === kind && Number(n) === count && (w ?? 'before') === when) {
    process.stderr.write(`svc-operator: fault injection: killing the orchestrator at ${kind} #${count} (${when})\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}

function actionLine(step: Step): string {
  switch (step.kind) {
    case 'restartMember':
      return `restartMember ${step.member} ${step.version}`;
    case 'moveLeader':
      return `moveLeader ${step.from} ${step.to}`;
    case 'snapshot':
      return `snapshot ${step.member}`;
    case 'createCluster':
      return `createCluster ${step.version} x${step.replicas}`;
    case 'addMember':
    case 'startMember':
    case 'removeMember':
    case 'retireMember':
      return `${step.kind} ${step.member}`;
    default:
      return step.kind;
  }
}

/** Drives the runtime's cluster to `spec` by the planner's steps. */
export async function reconcile(runtime: Runtime, spec: SvcClusterSpec, opts: ReconcileOptions = {}): Promise<ReconcileResult> {
  const pollMs = opts.pollMs ?? 300;
  const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
  const maxErrors = opts.maxErrors ?? 8;
  const crashAt = opts.crashAt ?? process.env.SVC_OPERATOR_CRASH_AT;
  const client = opts.client ?? new MemberClient();
  const counts = new Map<string, number>();
  const snapshots: SnapshotRecord[] = [];
  const actions: string[] = [];
  let progress = await runtime.loadProgress();
  let lastLine = '';
  let errors = 0;
  try {
    for (;;) {
      const { cluster: observed, urls } = await observe(runtime, client);
      const noted = noteMembersDone(progress, observed);
      if (noted !== progress) {
        progress = noted;
        await runtime.saveProgress(progress);
      }
      const step: Step = plan(spec, observed, progress);
      const line = describeStep(step);
      if (line !== lastLine) {
        lastLine = line;
        opts.onStep?.({ step, line, at: Date.now(), progress, observed });
      }
      if (step.kind === 'steady') {
        const settled = settle(progress, step.version, Date.now());
        if (settled !== progress) {
          progress = settled;
          await runtime.saveProgress(progress);
        }
        return { outcome: 'steady', step, progress, snapshots, actions };
      }
      if (step.kind === 'blocked') return { outcome: 'blocked', step, progress, snapshots, actions };
      if (Date.now() > deadline) return { outcome: 'timeout', step, progress, snapshots, actions, error: `gave up after ${opts.timeoutMs ?? 600_000} ms: ${line}` };
      if (step.kind === 'wait') {
        await sleep(pollMs);
        continue;
      }
      // Write-ahead: record the step, then carry it out.
      const n = (counts.get(step.kind) ?? 0) + 1;
      counts.set(step.kind, n);
      const before = beginStep(progress, step, Date.now());
      if (before !== progress) {
        progress = before;
        await runtime.saveProgress(progress);
      }
      crashCheck(crashAt, step.kind, n, 'before');
      try {
        await execute(runtime, client, spec, step, urls, observed, (rec) => {
          snapshots.push(rec);
          progress = recordSnapshot(progress!, rec);
        });
        if (step.kind === 'snapshot') {
          await runtime.saveProgress(progress);
          await runtime.pruneSnapshots(spec.backup?.keep ?? 3);
        }
        if (isMutating(step)) actions.push(actionLine(step));
        errors = 0;
      } catch (e) {
        errors++;
        opts.onError?.(step, e as Error);
        lastLine = '';
        if (errors >= maxErrors) return { outcome: 'failed', step, progress, snapshots, actions, error: (e as Error).message };
        await sleep(pollMs * 2);
        continue;
      }
      crashCheck(crashAt, step.kind, n, 'after');
    }
  } finally {
    if (!opts.client) client.close();
  }
}

async function execute(
  runtime: Runtime,
  client: MemberClient,
  spec: SvcClusterSpec,
  step: Step,
  urls: Map<string, string>,
  observed: ObservedCluster,
  onSnapshot: (r: SnapshotRecord) => void,
): Promise<void> {
  if (isScalingStep(step)) {
    await executeScaling(runtime, client, step, urls, observed);
    return;
  }
  switch (step.kind) {
    case 'createCluster':
      await runtime.createCluster(spec);
      return;
    case 'snapshot': {
      const file = runtime.snapshotLocation(step.from, step.to, step.member);
      onSnapshot(await client.snapshot(urls.get(step.member)!, step.member, file));
      return;
    }
    case 'moveLeader': {
      const toId = step.toId ?? observed.members.find((m) => m.name === step.to)?.id;
      if (!toId) throw new Error(`no id known for member ${step.to}`);
      const fromUrl = urls.get(step.from)!;
      await client.moveLeader(fromUrl, toId);
      // Wait (briefly) until the old leader says it is a follower, so the next plan sees the move.
      const until = Date.now() + 10_000;
      while (Date.now() < until && (await client.isLeader(fromUrl).catch(() => true))) await sleep(100);
      return;
    }
    case 'restartMember':
      await runtime.restartMember(step.member, step.version);
      return;
    case 'complete':
      return;
    default:
      return;
  }
}
