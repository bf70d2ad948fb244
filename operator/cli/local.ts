// `svc-operator local apply|status|delete`: an SvcCluster on this machine, driven by the orchestrator.
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { parseSvcCluster, updateProblems, ValidationError } from '../api/validate.js';
import type { SvcCluster } from '../api/types.js';
import { MemberClient } from '../members/index.js';
import { observe, reconcile, type ReconcileResult } from '../orchestrator/index.js';
import { LocalRuntime } from '../runtime/local/index.js';
import { observedClusterVersion } from '../planner/plan.js';
import { describeStep } from '../planner/steps.js';
import { StepPrinter } from './printer.js';
import { UsageError } from './args.js';

/** Raised when a command fails (exit code 1). */
export class CommandError extends Error {
  readonly code = 'FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
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

export interface ApplyOptions {
  stateDir: string;
  printer?: StepPrinter;
  svcEntry?: string;
  timeoutMs?: number;
  pollMs?: number;
  /** Fault injection (SVC_OPERATOR_CRASH_AT): see ReconcileOptions.crashAt. */
  crashAt?: string;
}

/**
 * Makes the manifest so on this machine: creates the cluster, or (same name, new spec.version) upgrades it
 * by the planner's steps. Resolves with the orchestrator's result.
 */
export async function applyCluster(cluster: SvcCluster, opts: ApplyOptions): Promise<ReconcileResult> {
  const runtime = new LocalRuntime({ stateDir: opts.stateDir, name: cluster.metadata.name, svcEntry: opts.svcEntry });
  const state = runtime.state();
  const printer = opts.printer;
  if (state) {
    if (state.name !== cluster.metadata.name) throw new CommandError(`${runtime.stateDir} holds cluster "${state.name}", not "${cluster.metadata.name}"; use another --state-dir`);
    const problems = updateProblems(state.spec, cluster.spec);
    if (problems.length > 0) throw new CommandError(`cannot apply: ${problems.join('; ')}`);
    const started = await runtime.startStopped();
    if (started.length > 0) printer?.line(`started stopped member(s): ${started.join(', ')}`);
    await runtime.saveSpec(cluster.spec);
  }
  return reconcile(runtime, cluster.spec, {
    timeoutMs: opts.timeoutMs,
    pollMs: opts.pollMs,
    crashAt: opts.crashAt,
    onStep: (e) => {
      printer?.step(e);
      void runtime.noteStep(e.line);
    },
    onError: (step, err) => printer?.line(`step ${step.kind} failed (will retry): ${err.message}`),
  });
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
  const why = r.step.kind === 'blocked' ? `UpgradeBlocked (${r.step.code}): ${r.step.reason}` : r.error ?? describeStep(r.step);
  process.stderr.write(`svc-operator: ${cluster.metadata.name} not reconciled: ${why}\n`);
  return 1;
}

/** `local status`. */
export async function localStatus(stateDir: string, output: string | undefined): Promise<number> {
  const runtime = new LocalRuntime({ stateDir, svcEntry: envSvcEntry() });
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}`);
  const client = new MemberClient({ timeoutMs: 2000, attempts: 1 });
  try {
    const { cluster, urls } = await observe(runtime, client);
    const members = cluster.members.map((m) => ({
      name: m.name,
      release: m.release ?? null,
      configuredVersion: m.configuredVersion,
      leader: m.leader,
      healthy: m.healthy,
      endpoint: urls.get(m.name),
      appliedIndex: m.appliedIndex ?? null,
      failure: m.failure ?? null,
    }));
    const out = {
      name: state.name,
      specVersion: state.spec.version,
      clusterVersion: observedClusterVersion(cluster) ?? null,
      members,
      upgrade: state.progress ?? null,
      lastStep: state.lastStep ?? null,
    };
    if (output === 'json') {
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      return 0;
    }
    const rows = [['NAME', 'RELEASE', 'LEADER', 'HEALTH', 'ENDPOINT'], ...members.map((m) => [m.name, m.release ?? `(${m.configuredVersion}, down)`, m.leader ? '*' : '', m.healthy ? 'healthy' : 'unhealthy', m.endpoint ?? ''])];
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    process.stdout.write(`cluster ${out.name}: spec.version ${out.specVersion}, cluster version ${out.clusterVersion ?? 'unknown'}\n`);
    for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()}\n`);
    const p = state.progress;
    if (p) {
      const st = p.finishedAt !== undefined ? `complete at ${new Date(p.finishedAt).toISOString()}` : `in progress, step ${p.step}`;
      process.stdout.write(`upgrade ${p.from} -> ${p.to}: ${st}; members done: ${p.membersDone.join(', ') || 'none'}\n`);
      if (p.snapshot) process.stdout.write(`snapshot: ${p.snapshot.location} (${p.snapshot.size} bytes, revision ${p.snapshot.revision}, sha256 ${p.snapshot.sha256.slice(0, 16)}…)\n`);
    }
    if (state.lastStep) process.stdout.write(`last step: ${state.lastStep}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** `local delete`. */
export async function localDelete(stateDir: string): Promise<number> {
  const runtime = new LocalRuntime({ stateDir, svcEntry: envSvcEntry() });
  if (!runtime.state()) throw new CommandError(`no local cluster in ${runtime.stateDir}`);
  await runtime.delete();
  process.stdout.write(`deleted the local cluster in ${runtime.stateDir}\n`);
  return 0;
}
