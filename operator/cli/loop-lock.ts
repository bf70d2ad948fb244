// One loop per state dir, as the CLI keeps it (the lock itself: runtime/local/lock.ts): every command that runs the
// loop holds the lock; beside `local run` the commands that carry a spec or request hand it over and wait; any other
// holder means a refusal that names it and the way out.
import type { SvcClusterSpec } from '../api/types.js';
import type { ReconcileResult } from '../orchestrator/index.js';
import { describeStep } from '../planner/steps.js';
import type { Step } from '../planner/types.js';
import { holderAlive, readLock, RUN_COMMAND, takeLock, type LocalRuntime, type LockHolder } from '../runtime/local/index.js';
import { CommandError } from './args.js';
import type { StepPrinter } from './printer.js';

/** A lock's holder in words. */
export function holderText(h: LockHolder): string {
  return `\`svc-operator ${h.command}\` (pid ${h.pid}, since ${h.since}${h.listen ? `, ${h.listen}` : ''})`;
}

/** The refusal when another loop holds the state dir. */
export function busy(stateDir: string, h: LockHolder): CommandError {
  if (h.command === RUN_COMMAND) return new CommandError(`${stateDir} is looked after by ${holderText(h)}, one loop per state dir; stop it first (kill -TERM ${h.pid}, or systemctl stop of its unit: it finishes the step under way), then run this again`);
  return new CommandError(`${stateDir} is reconciled by ${holderText(h)}; wait for it to finish (or stop it: kill ${h.pid}), then run this again`);
}

/**
 * Runs `body` holding the state dir's lock. When `local run` holds it, `beside` answers instead (apply: the spec
 * handed over); without `beside`, or any other holder: refused, naming the holder and the way out.
 */
export async function exclusive<T>(runtime: LocalRuntime, command: string, printer: StepPrinter | undefined, body: () => Promise<T>, beside?: (holder: LockHolder) => Promise<T>): Promise<T> {
  const lock = takeLock(runtime.stateDir, command);
  if ('held' in lock) {
    if (lock.held.command !== RUN_COMMAND || !beside) throw busy(runtime.stateDir, lock.held);
    return beside(lock.held);
  }
  if (lock.tookOver) printer?.line(`took over the lock of ${holderText(lock.tookOver)}: that process is gone`);
  try {
    return await body();
  } finally {
    lock.release();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Saves `spec` for the running `local run` and waits until a pass that read it settles. */
export async function handOver(runtime: LocalRuntime, spec: SvcClusterSpec, holder: LockHolder, printer: StepPrinter | undefined, timeoutMs = 600_000): Promise<ReconcileResult> {
  const since = Date.now();
  await runtime.saveSpec(spec);
  // a pass begun after this read the state as saved
  const savedAt = Date.now();
  printer?.line(`handed the spec over to ${holderText(holder)}, which reconciles ${runtime.stateDir}; waiting for it to settle (stopping this wait leaves it to local run)`);
  const shown = new Set<string>();
  const stepOf = (s: unknown) => s as Step;
  for (;;) {
    for (const e of runtime.state()?.stepHistory ?? []) {
      const key = `${e.time} ${e.line}`;
      if (Date.parse(e.time) >= since && !shown.has(key)) {
        shown.add(key);
        printer?.line(`${e.time} ${e.line}`);
      }
    }
    const h = readLock(runtime.stateDir);
    if (h?.pid === holder.pid && h.settled && h.settled.passAt > savedAt) {
      const s = h.settled;
      printer?.line(`local run settled (${s.outcome}): ${describeStep(stepOf(s.step))}`);
      return { outcome: s.outcome as ReconcileResult['outcome'], step: stepOf(s.step), progress: runtime.state()?.records.progress, snapshots: [], actions: s.actions, defrags: [], ...(s.error ? { error: s.error } : {}) };
    }
    if (!h || h.pid !== holder.pid || !holderAlive(h)) {
      throw new CommandError(`local run (pid ${holder.pid}) stopped before it settled on the applied spec; the spec is saved in ${runtime.stateDir}: start \`svc-operator local run --state-dir ${runtime.stateDir}\` again, or run this again`);
    }
    if (Date.now() - since > timeoutMs) {
      const last = runtime.state()?.lastStep;
      return { outcome: 'timeout', step: { kind: 'wait', code: 'Paused', reason: last ?? 'no step yet' }, snapshots: [], actions: [], defrags: [], error: `local run (pid ${holder.pid}) has not settled on the applied spec after ${Math.round(timeoutMs / 1000)} s (it goes on); last step: ${last ?? 'none'}` };
    }
    await sleep(200);
  }
}
