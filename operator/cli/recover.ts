// `svc-operator local recover [--state-dir DIR] [--dry-run] [--output json]`: quorum-loss recovery of a local cluster,
// never automatic. Lists every member (applied index and revision from Maintenance.Status, which each member serves
// on its own without quorum; reachability), names the survivor and what each other member loses; then (without
// --dry-run) writes a request token into state.json and runs the engine's passes: a snapshot of the survivor, its
// restart in place with --force-new-cluster, a restart without the flag, the scale-up back to spec.replicas. A
// cluster that has quorum is refused (exit 1) and nothing is touched. A recovery under way (a crash, a timeout) is
// resumed by running the command again (or `local apply`).
import { MemberClient } from '../members/index.js';
import { observe, reconcile } from '../orchestrator/index.js';
import { recoveryLines, recoveryPlan, recoveryRefusal, recoveryUnderWay } from '../planner/recovery.js';
import { describeStep } from '../planner/steps.js';
import { CommandError, localRuntime, loopReports } from './local.js';
import { exclusive, handOver } from './loop-lock.js';
import { StepPrinter } from './printer.js';

export interface LocalRecoverOptions {
  stateDir: string;
  dryRun: boolean;
  output?: string;
  /** Fault injection (SVC_OPERATOR_CRASH_AT), as `local apply`. */
  crashAt?: string;
  out?: (s: string) => void;
}

/** `local recover`; resolves with the exit code (refusals throw CommandError: exit 1). */
export async function localRecover(o: LocalRecoverOptions): Promise<number> {
  const out = o.out ?? ((s: string) => void process.stdout.write(s));
  const json = o.output === 'json';
  const runtime = localRuntime(o.stateDir);
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}; name the state dir of the cluster to recover with --state-dir`);
  const client = new MemberClient({ timeoutMs: 2000, attempts: 1 });
  try {
    const { cluster } = await observe(runtime, client);
    if (state.records.recovery) cluster.recovery = { record: state.records.recovery, ...(state.requests.recover ? { request: state.requests.recover } : {}) };
    const under = recoveryUnderWay(cluster);
    if (under) {
      if (!json) out(`recovery ${under.token} from ${under.survivor} is under way (step ${under.step}); resuming it\n`);
      if (o.dryRun) {
        if (!json) out('dry run: nothing was touched; run without --dry-run (or `svc-operator local apply`) to go on\n');
        else out(`${JSON.stringify({ dryRun: true, underWay: under }, null, 2)}\n`);
        return 0;
      }
    } else {
      const refusal = recoveryRefusal(cluster, state.name);
      if (refusal) throw new CommandError(`cannot recover ${state.name}: ${refusal}`);
      const plan = recoveryPlan(cluster);
      if (json && o.dryRun) {
        out(`${JSON.stringify({ dryRun: true, survivor: plan.survivor.name, members: plan.report }, null, 2)}\n`);
        return 0;
      }
      if (!json) for (const l of recoveryLines(plan)) out(`${l}\n`);
      if (o.dryRun) {
        if (!json) out('dry run: nothing was touched; run without --dry-run to recover\n');
        return 0;
      }
      runtime.requestRecovery();
    }
    const printer = json ? undefined : new StepPrinter({ write: (s: string) => out(s) });
    // beside `local run`: the request recorded is its to carry out
    const r = await exclusive(runtime, 'local recover', printer, () => reconcile(runtime, state.spec, { crashAt: o.crashAt, client, ...loopReports(runtime, printer) }), (holder) => handOver(runtime, state.spec, holder, printer));
    const rec = runtime.state()?.records.recovery;
    const done = r.outcome === 'steady' && rec?.finishedAt !== undefined;
    if (json) out(`${JSON.stringify({ outcome: r.outcome, recovery: rec ?? null, actions: r.actions, error: r.error ?? null }, null, 2)}\n`);
    else if (rec?.snapshot) out(`snapshot of ${rec.survivor} before the recovery: ${rec.snapshot.location} (revision ${rec.snapshot.revision}, ${rec.snapshot.size} bytes, sha256 ${rec.snapshot.sha256})\n`);
    if (done) {
      if (!json) out(`recovered ${state.name} from ${rec.survivor}'s data: ${state.spec.replicas} member(s), the same names and client URLs\n`);
      return 0;
    }
    const why = r.step.kind === 'blocked' ? `${r.step.code}: ${r.step.reason}` : r.error ?? describeStep(r.step);
    process.stderr.write(`svc-operator: recovery of ${state.name} not finished: ${why}; run \`svc-operator local recover --state-dir ${o.stateDir}\` again to resume it\n`);
    return 1;
  } finally {
    client.close();
  }
}
