// One chaos run: a fresh cluster, concurrent clients, a seeded schedule of faults, then every check.
// A run is fully described by (scenario, seed, faults count); it prints a replay command.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../process.js';
import { checkAcknowledgedWrites, checkCrashes, checkHashes, storeHistoryValues } from './checks.js';
import { ChaosCluster } from './cluster.js';
import { NETWORK_FAULTS, PROCESS_FAULTS, runFault, type FaultKind, type FaultRecord, type FaultStep } from './faults.js';
import { HistoryRecorder } from './history.js';
import { checkHistory } from './linearizability.js';
import { rng, type Rng } from './rng.js';
import { Workload } from './workload.js';

/** Scenario names: which cluster and which faults. */
export const SCENARIOS = ['crash', 'partition', 'snapshot', 'upgrade', 'nospace', 'defrag', 'replace'] as const;
export type Scenario = (typeof SCENARIOS)[number];

interface ScenarioSpec {
  faults: readonly FaultKind[];
  version?: string;
  extraArgs: string[];
  snapshotCount?: number;
}

const SPECS: Record<Scenario, ScenarioSpec> = {
  crash: { faults: PROCESS_FAULTS, extraArgs: ['--snapshot-count=500'], snapshotCount: 500 },
  partition: { faults: NETWORK_FAULTS, extraArgs: [] },
  snapshot: { faults: ['snapshot-catchup'], extraArgs: ['--snapshot-count=100'], snapshotCount: 100 },
  upgrade: { faults: ['rolling-upgrade'], version: '3.3.27', extraArgs: [] },
  nospace: { faults: ['nospace'], extraArgs: ['--quota-backend-bytes=4194304'] },
  defrag: { faults: ['defrag'], extraArgs: [] },
  // small snapshots: the replacement catches up from a snapshot or from the log, depending on how much was written
  replace: { faults: ['replace'], extraArgs: ['--snapshot-count=300'], snapshotCount: 300 },
};

export interface RunOptions {
  scenario: Scenario;
  seed: number;
  /** Faults in the run. Default: every kind of the scenario once. */
  faults?: number;
  /** Concurrent clients. Default 4. */
  clients?: number;
  /** How long a fault holds. Default 1000-2500 ms (seeded). */
  holdMs?: number;
  /** Bound on the time to healthy after a fault heals. Default 30 s. */
  recoveryBoundMs?: number;
  /** Draw faults only from these kinds (default: the scenario's). */
  kinds?: readonly FaultKind[];
  /** Progress lines. Default: stderr. */
  log?: (line: string) => void;
}

/** Everything a run found. */
export interface RunResult {
  scenario: Scenario;
  seed: number;
  replay: string;
  schedule: FaultStep[];
  faults: FaultRecord[];
  operations: number;
  okOperations: number;
  /** Linearizability violations, crashes, hash mismatches, recovery overruns: must be empty. */
  anomalies: string[];
  lostWrites: string[];
  /** Longest time from a fault's injection to the first successful write invoked after it. */
  longestUnavailableMs: number;
  checkerReport: string;
  dir?: string;
}

/** The command that replays a run. */
export function replayCommand(o: { scenario: Scenario; seed: number; faults?: number; kinds?: readonly FaultKind[] }): string {
  const kinds = o.kinds?.length ? ` --kinds ${o.kinds.join(',')}` : '';
  return `node dist/bench/chaos.js --scenario ${o.scenario} --seed ${o.seed}${o.faults ? ` --faults ${o.faults}` : ''}${kinds} --runs 1`;
}

/** The planned faults of a run: the scenario's kinds in seeded order, repeated up to `count`. */
export function makeSchedule(scenario: Scenario, r: Rng, count?: number, holdMs?: number, only?: readonly FaultKind[]): FaultStep[] {
  const kinds = only?.length ? only : SPECS[scenario].faults;
  const n = count ?? kinds.length;
  const out: FaultStep[] = [];
  while (out.length < n) for (const k of r.shuffle(kinds)) if (out.length < n) out.push({ kind: k, holdMs: holdMs ?? 1000 + r.int(1500), pauseMs: 300 + r.int(1200) });
  return out;
}

/** Runs one seeded chaos run and checks it. Never throws for findings; they are in the result. */
export async function runChaos(o: RunOptions): Promise<RunResult> {
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const spec = SPECS[o.scenario];
  const r = rng(o.seed);
  const schedule = makeSchedule(o.scenario, r.fork('schedule'), o.faults, o.holdMs, o.kinds);
  const replay = replayCommand(o);
  log(`chaos: scenario=${o.scenario} seed=${o.seed} schedule=${schedule.map((s) => `${s.kind}(hold ${s.holdMs}ms after ${s.pauseMs}ms)`).join(', ')}`);
  log(`chaos: replay with: ${replay}`);
  const result: RunResult = {
    scenario: o.scenario,
    seed: o.seed,
    replay,
    schedule,
    faults: [],
    operations: 0,
    okOperations: 0,
    anomalies: [],
    lostWrites: [],
    longestUnavailableMs: 0,
    checkerReport: '',
  };
  const cluster = await ChaosCluster.start({ version: spec.version, extraArgs: spec.extraArgs, rand: r.fork('proxy').next });
  result.dir = cluster.dir;
  const history = new HistoryRecorder();
  const keys = ['k0', 'k1', 'k2', 'k3'];
  const workload = new Workload(cluster, history, r.fork('workload'), { clients: o.clients ?? 4, keys });
  const bound = o.recoveryBoundMs ?? 30000;
  let failed = false;
  try {
    workload.start();
    await sleep(500);
    for (const step of schedule) {
      await sleep(step.pauseMs);
      const rec = await runFault(step, { cluster, rand: r.fork(`fault${result.faults.length}`), workload, now: () => history.now(), log, snapshotCount: spec.snapshotCount });
      let recoveryMs = bound;
      try {
        recoveryMs = await cluster.waitHealthy(bound);
      } catch (e) {
        result.anomalies.push(`after ${rec.kind} (${rec.detail}): ${(e as Error).message}`);
      }
      for (const a of rec.anomalies ?? []) result.anomalies.push(`${rec.kind}: ${a}`);
      result.faults.push({ ...rec, recoveryMs });
      log(`chaos: ${rec.kind} healed (${rec.detail}); healthy again after ${recoveryMs} ms`);
    }
    await sleep(1000);
    await workload.stop();
    await cluster.waitHealthy(bound).catch((e: Error) => result.anomalies.push(`at the end: ${e.message}`));
    await workload.finalReads();

    const ops = history.ops;
    // Unknown-outcome writes whose value never appears in the store's own history did not happen: mark
    // them failed, so the search does not have to try every subset of them (this only makes the check
    // stricter: a read of such a value is then a violation).
    const finalRevision = Math.max(0, ...ops.filter((x) => x.client === -1 && x.revision).map((x) => x.revision!));
    const stored = await storeHistoryValues(cluster.members[cluster.running()[0]].endpoint, 'k', 'l', finalRevision).catch(() => undefined);
    let patched = 0;
    if (stored) {
      for (const x of ops) {
        if (x.outcome !== 'unknown' || (x.input.kind !== 'put' && x.input.kind !== 'cas')) continue;
        if (!stored.get(x.input.key)?.has(x.input.value)) {
          x.outcome = 'failed';
          x.error = `${x.error ?? ''} [never in the store's history: not applied]`;
          patched++;
        }
      }
    }
    log(`chaos: ${patched} unknown-outcome writes never reached the store (${stored ? 'from its watch history' : 'history compacted: all kept as unknown'})`);
    result.operations = ops.length;
    result.okOperations = ops.filter((x) => x.outcome === 'ok').length;
    const verdict = checkHistory(ops, { budgetMs: 60000 });
    result.checkerReport = verdict.report;
    for (const v of verdict.violations) result.anomalies.push(`linearizability: ${v.report}`);
    for (const u of verdict.undecided) result.anomalies.push(`linearizability: checker gave up on key ${u.key} (${u.operations} ops)`);

    const via = cluster.running()[0];
    const lost = await checkAcknowledgedWrites(ops, workload.conn(via));
    result.lostWrites = lost.lost;
    log(`chaos: ${lost.checked} acknowledged writes read back at their revisions (${lost.compacted} compacted away), ${lost.lost.length} lost`);

    const hashes = await checkHashes(cluster, finalRevision);
    result.anomalies.push(...hashes.problems);
    result.anomalies.push(...checkCrashes(cluster));

    for (const f of result.faults) {
      const firstOk = ops.filter((x) => x.outcome === 'ok' && x.input.kind !== 'get' && x.call >= f.injectedAt).reduce((m, x) => Math.min(m, x.ret), Infinity);
      const u = Number.isFinite(firstOk) ? firstOk - f.injectedAt : f.healedAt - f.injectedAt + f.recoveryMs;
      result.longestUnavailableMs = Math.max(result.longestUnavailableMs, u);
    }
    failed = result.anomalies.length > 0 || result.lostWrites.length > 0;
    log(`chaos: ${result.operations} operations (${result.okOperations} ok), ${result.faults.length} faults, ${result.anomalies.length} anomalies, ${result.lostWrites.length} lost writes`);
  } catch (e) {
    failed = true;
    result.anomalies.push(`run aborted: ${(e as Error).stack ?? e}`);
  } finally {
    await workload.stop();
    workload.close();
    if (!result.operations) {
      result.operations = history.ops.length;
      result.okOperations = history.ops.filter((x) => x.outcome === 'ok').length;
    }
    if (failed) {
      writeFileSync(join(cluster.dir, 'history.json'), JSON.stringify(history.ops, null, 1));
      log(`chaos: FAILED; logs and history.json kept in ${cluster.dir}\n${cluster.logTails(15)}`);
      for (const a of result.anomalies) log(`  anomaly: ${a}`);
      for (const l of result.lostWrites.slice(0, 20)) log(`  lost: ${l}`);
      log(`chaos: replay with: ${replay}`);
    }
    await cluster.close(failed);
  }
  return result;
}

/** The summary table of several runs. */
export function summaryTable(results: readonly RunResult[]): string {
  const byKind = new Map<string, number>();
  for (const r of results) for (const f of r.faults) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1);
  const rows: Array<[string, string]> = [
    ['runs', String(results.length)],
    ['operations', `${results.reduce((s, r) => s + r.operations, 0)} (${results.reduce((s, r) => s + r.okOperations, 0)} ok)`],
    ...[...byKind].sort().map(([k, n]): [string, string] => [`faults: ${k}`, String(n)]),
    ['faults injected (total)', String(results.reduce((s, r) => s + r.faults.length, 0))],
    ['anomalies (must be 0)', String(results.reduce((s, r) => s + r.anomalies.length, 0))],
    ['acknowledged writes lost (must be 0)', String(results.reduce((s, r) => s + r.lostWrites.length, 0))],
    ['longest unavailability after a fault', `${Math.round(Math.max(0, ...results.map((r) => r.longestUnavailableMs)))} ms`],
    ['longest recovery to healthy after heal', `${Math.max(0, ...results.flatMap((r) => r.faults.map((f) => f.recoveryMs)))} ms`],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  const line = `+${'-'.repeat(w + 2)}+${'-'.repeat(22)}+`;
  return [line, ...rows.map(([a, b]) => `| ${a.padEnd(w)} | ${b.padStart(20)} |`), line].join('\n');
}
