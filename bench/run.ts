// `npm run bench`: 3-member svc against 3-member reference etcd clusters (same machine, same load generator, taking
// turns run by run): put throughput and latency, range throughput (serializable and linearizable gets, a small prefix
// range), watch fan-out (one writer, many watchers, every event checked), member CPU per operation and member RSS
// (idle, and the peak under each load); then the component benches that exist (raft core, storage engine, mvcc),
// each on its own so one failing does not stop the rest. docs/benchmarks.md explains every figure.
//
// Flags (after `npm run bench --`):
//   --workloads=put,range,watch  the cluster benches to run (default all three, in this order within a round)
//   --duration=<ms>        measured window per run (default 6000; --warmup=<ms> default 1000)
//   --rounds=<n>           rounds (default 2); the systems take turns, the tables show medians over rounds
//   --concurrency=16,64    requests in flight (puts and ranges), one run per value
//   --range=serializable,linearizable,prefix  the range kinds (default all three)
//   --watchers=1000 --streams=10 --watch-writer=1  watch fan-out: watchers, gRPC streams, the writer's puts in flight
//   --target=leader|all    send every request to the leader (default) or spread connections over all members
//   --systems=etcd,svc     which clusters to measure
//   --loadgen=node|reference  the load generator: this process (default) or the reference's own benchmark tool
//                          (etcd v3.5.21 tools/benchmark, built once by scripts/build-reference-benchmark.sh), which
//                          runs a count, not a time: --ref-puts=20000 --ref-ranges=50000 --ref-watch-puts=200 per run;
//                          each of its watch runs is followed by a 2 s Node run that checks every delivery (--no-watch-check: not)
//   --profile              run svc members under node --cpu-prof; print each member's hottest functions (measured windows only)
//   --svc-build=<label>:<dir>  also run a 3-member svc cluster from another build output folder (repeatable), taking
//                          turns with the others: an A/B of two builds in the same run, same machine load
//   --svc-node-args=<label>:<flags>  node flags for the members of one svc cluster ("svc", or a --svc-build label),
//                          e.g. --svc-node-args=b:--max-semi-space-size=32 (an A/B of V8 settings: the same dir twice)
//   --cores-factor         instead of the cluster benches: a 1-member cluster of each system, its put throughput with
//                          the member allowed 2 cores, then 1 core (taskset -a), at each --concurrency; the factor
//                          2-core/1-core says how much of a second core the member can use
//   --no-components        skip the raft/engine/mvcc benches
//   --components-only      only the component benches
// `npm run bench -- operator [--clusters=500]`: svc-operator reconciling many SvcClusters on a real kube-apiserver
// (bench/operator.ts).
// `npm run bench -- backup-lag [--duration=60000] [--segment-seconds=2] [--rate=100]`: continuous backup's recovery
// point, how far the newest restorable revision is behind acknowledged writes (bench/backup-lag.ts).
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runPutLoad } from './put.js';
import { prefillRangeKeys, prefixRange, RANGE_KEYS, RANGE_KINDS, rangeKey, rangeKindLabel, runRangeLoad, type RangeKind } from './range.js';
import { runWatchLoad, type WatchLoadResult } from './watch.js';
import { startEtcdCluster, startSvcCluster, type BenchCluster } from './lib/cluster.js';
import type { LoadResult } from './lib/load.js';
import { buildReferenceTool, parseToolReport, runTool, toLoadResult, toolGlobalArgs } from './lib/reference-loadgen.js';
import { busyShare, cpuTimeMs, formatTable, machineCpuTicks, markdownTable, median, mib, ms, peakRssBytes, RssSampler, rssBytes } from './lib/stats.js';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { formatProfile, monotonicUs, summariseProfile, type TimeWindow } from './lib/cpuprofile.js';
import { countBetween, meanMsBetween, scrapeDiskMetrics } from './lib/metrics.js';
import { deliveryVerdict } from './lib/watch-check.js';

export type Workload = 'put' | 'range' | 'watch';
const WORKLOADS: readonly Workload[] = ['put', 'range', 'watch'];

/** Parsed command-line options of the bench. */
export interface BenchRunOptions {
  durationMs: number;
  warmupMs: number;
  concurrency: number[];
  target: 'leader' | 'all';
  systems: Array<'etcd' | 'svc'>;
  /** Extra svc builds to compare (label and build output folder). */
  svcBuilds: Array<{ label: string; dir: string }>;
  /** Extra node flags per svc cluster label. */
  svcNodeArgs: Map<string, string[]>;
  /** Rounds; each round runs every system at every workload and concurrency once. Figures are medians over rounds. */
  rounds: number;
  profile: boolean;
  components: boolean;
  /** The cluster benches to run, in this order within a round. */
  workloads: Workload[];
  rangeKinds: RangeKind[];
  watchers: number;
  streams: number;
  watchWriter: number;
  loadgen: 'node' | 'reference';
  /** Requests per run of the reference tool (it runs a count, not a time). */
  refPuts: number;
  refRanges: number;
  /** The writer's puts per watch run of the reference tool (events = puts x watchers). */
  refWatchPuts: number;
  /** With the reference tool: follow each watch run with a 2 s Node run that checks every delivery. */
  watchCheck: boolean;
  /** --cores-factor: 1-member put throughput on 2 cores over 1 core, instead of the cluster benches. */
  coresFactor: boolean;
}

/** A clear message for a bad flag (the bench exits with status 2). */
export class BenchFlagError extends Error {
  override readonly name = 'BenchFlagError';
}

function list<T extends string>(flag: string, v: string, allowed: readonly T[]): T[] {
  const xs = v.split(',').filter(Boolean);
  const bad = xs.filter((x) => !allowed.includes(x as T));
  if (bad.length || !xs.length) throw new BenchFlagError(`${flag}: expected a comma-separated list of ${allowed.join(', ')}; got "${v}"`);
  return xs as T[];
}

function positive(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new BenchFlagError(`${flag}: expected a positive integer; got "${v}"`);
  return n;
}

/** Parses argv (the flags above). */
/** "<label>:<rest>" of --svc-build and --svc-node-args. */
const labelOf = (v: string): string => v.slice(0, v.indexOf(':'));
const afterLabel = (v: string): string => v.slice(v.indexOf(':') + 1);

export function parseArgs(argv: readonly string[]): BenchRunOptions {
  const o: BenchRunOptions = {
    durationMs: 6000,
    warmupMs: 1000,
    rounds: 2,
    concurrency: [16, 64],
    target: 'leader',
    systems: ['etcd', 'svc'],
    svcBuilds: [],
    svcNodeArgs: new Map(),
    profile: false,
    components: true,
    workloads: [...WORKLOADS],
    rangeKinds: [...RANGE_KINDS],
    watchers: 1000,
    streams: 10,
    watchWriter: 1,
    loadgen: 'node',
    refPuts: 20000,
    refRanges: 50000,
    refWatchPuts: 200,
    watchCheck: true,
    coresFactor: false,
  };
  for (const a of argv) {
    const eq = a.indexOf('=');
    const [k, v] = eq < 0 ? [a, ''] : [a.slice(0, eq), a.slice(eq + 1)];
    if (k === '--duration') o.durationMs = positive(k, v);
    else if (k === '--warmup') o.warmupMs = Number(v);
    else if (k === '--concurrency') o.concurrency = v.split(',').map((x) => positive(k, x));
    else if (k === '--target' && (v === 'leader' || v === 'all')) o.target = v;
    else if (k === '--systems') o.systems = list(k, v, ['etcd', 'svc'] as const);
    else if (k === '--rounds') o.rounds = positive(k, v);
    else if (k === '--profile') o.profile = true;
    else if (k === '--svc-build' && v.includes(':')) o.svcBuilds.push({ label: labelOf(v), dir: afterLabel(v) });
    else if (k === '--svc-node-args' && v.includes(':')) o.svcNodeArgs.set(labelOf(v), afterLabel(v).split(/\s+/).filter(Boolean));
    else if (k === '--no-components') o.components = false;
    else if (k === '--components-only') o.workloads = [];
    else if (k === '--workloads') o.workloads = list(k, v, WORKLOADS);
    else if (k === '--range') o.rangeKinds = list(k, v, RANGE_KINDS);
    else if (k === '--watchers') o.watchers = positive(k, v);
    else if (k === '--streams') o.streams = positive(k, v);
    else if (k === '--watch-writer') o.watchWriter = positive(k, v);
    else if (k === '--loadgen') {
      if (v !== 'node' && v !== 'reference') throw new BenchFlagError(`--loadgen: expected node or reference; got "${v}"`);
      o.loadgen = v;
    }
    else if (k === '--ref-puts') o.refPuts = positive(k, v);
    else if (k === '--ref-ranges') o.refRanges = positive(k, v);
    else if (k === '--ref-watch-puts') o.refWatchPuts = positive(k, v);
    else if (k === '--no-watch-check') o.watchCheck = false;
    else if (k === '--cores-factor') o.coresFactor = true;
    else throw new BenchFlagError(`unknown bench flag ${a} (see the flags at the top of bench/run.ts or docs/benchmarks.md)`);
  }
  if (o.watchers % o.streams !== 0 && o.loadgen === 'reference') {
    throw new BenchFlagError(`--watchers=${o.watchers} must be a multiple of --streams=${o.streams} with --loadgen=reference (it takes watchers per stream)`);
  }
  return o;
}

/** One measured run of one workload (put, range of one kind, watch) at one concurrency. */
export interface Spec {
  workload: Workload;
  /** Requests in flight (put, range) or the writer's puts in flight (watch). */
  concurrency: number;
  rangeKind?: RangeKind;
}

/** The runs of one round, in order: each workload, then each kind and concurrency. */
export function specs(o: BenchRunOptions): Spec[] {
  const out: Spec[] = [];
  for (const w of o.workloads) {
    if (w === 'put') for (const c of o.concurrency) out.push({ workload: 'put', concurrency: c });
    if (w === 'range') for (const kind of o.rangeKinds) for (const c of o.concurrency) out.push({ workload: 'range', rangeKind: kind, concurrency: c });
    if (w === 'watch') out.push({ workload: 'watch', concurrency: o.watchWriter });
  }
  return out;
}

const specKey = (s: Spec) => `${s.workload}/${s.rangeKind ?? ''}/${s.concurrency}`;

/** One run's figures before combining rounds. */
export interface Sample {
  /** Why the run failed (its figures are then absent). */
  failure?: string;
  result?: LoadResult;
  /** Member CPU ms per 1000 operations (puts, ranges, or watch events delivered). */
  cpu: number;
  walMs: number;
  putsPerSync: number;
  /** Each member's largest RSS during the run. */
  rss: Array<number | undefined>;
  watch?: WatchLoadResult;
  /** The watch delivery verdict ("ok", "FAILED (...)", or "not checked ..." for the reference tool). */
  verdict?: string;
  /** The share of the whole machine's CPU time that was busy during the run (every process, the load generator too). */
  machineBusy?: number;
  /** The 1-minute load average just before the run. */
  loadBefore?: number;
}

/** The rounds of one system and spec combined: the median of each figure, counts summed. */
export interface Row {
  system: string;
  spec: Spec;
  rounds: number;
  failedRounds: number;
  firstFailure?: string;
  result: LoadResult;
  memberCpuMsPer1k: number;
  leaderWalMs: number;
  putsPerWalSync: number;
  /** Median share of the machine's CPU busy during the runs (all processes). */
  machineBusy: number;
  /** Watch only: totals over rounds and the verdicts. */
  watch?: { puts: number; putsPerSec: number; delivered: number; missing: number; duplicated: number; outOfOrder: number; unexpected: number; writerErrors: number; verdict: string };
}

/** Combines the rounds of one system and spec. */
export function combine(system: string, spec: Spec, rounds: readonly Sample[]): Row {
  const ok = rounds.filter((x): x is Sample & { result: LoadResult } => x.result !== undefined);
  const r = ok.map((x) => x.result);
  const sum = (f: (w: WatchLoadResult) => number) => ok.reduce((s, x) => s + (x.watch ? f(x.watch) : 0), 0);
  const failures = rounds.filter((x) => x.failure);
  const verdicts = [...new Set(rounds.map((x) => x.verdict ?? (x.failure ? `FAILED: ${x.failure}` : undefined)).filter((v): v is string => !!v))];
  const bad = verdicts.filter((v) => v !== 'ok');
  return {
    system,
    spec,
    rounds: rounds.length,
    failedRounds: failures.length,
    firstFailure: failures[0]?.failure,
    result: {
      ops: r.reduce((s, x) => s + x.ops, 0),
      errors: r.reduce((s, x) => s + x.errors, 0),
      firstError: r.find((x) => x.firstError)?.firstError,
      seconds: r.reduce((s, x) => s + x.seconds, 0),
      opsPerSec: median(r.map((x) => x.opsPerSec)),
      p50Ms: median(r.map((x) => x.p50Ms)),
      p99Ms: median(r.map((x) => x.p99Ms)),
      maxMs: r.length ? Math.max(...r.map((x) => x.maxMs)) : Number.NaN,
    },
    memberCpuMsPer1k: median(ok.map((x) => x.cpu)),
    leaderWalMs: median(ok.map((x) => x.walMs)),
    putsPerWalSync: median(ok.map((x) => x.putsPerSync)),
    machineBusy: median(ok.filter((x) => x.machineBusy !== undefined).map((x) => x.machineBusy!)),
    watch:
      spec.workload === 'watch'
        ? {
            puts: sum((w) => w.puts),
            // With the reference tool the watch results are the check run's: its writer rate is not the figure.
            putsPerSec: median(ok.filter((x) => x.watch && !x.verdict?.includes('(checked: Node run')).map((x) => x.watch!.putsPerSec)),
            delivered: r.reduce((s, x) => s + x.ops, 0),
            missing: sum((w) => w.check.missing),
            duplicated: sum((w) => w.check.duplicated),
            outOfOrder: sum((w) => w.check.outOfOrder),
            unexpected: sum((w) => w.check.unexpected),
            writerErrors: sum((w) => w.writerErrors),
            verdict: bad.length ? bad.join('; ') : (verdicts[0] ?? '-'),
          }
        : undefined,
  };
}

/** Member RSS of one cluster: right after start (idle), and the largest sampled during each workload's runs. */
export interface MemoryRow {
  system: string;
  idle: Array<number | undefined>;
  peakBy: Partial<Record<Workload, Array<number | undefined>>>;
  /** VmHWM at the end: the peak over the whole bench, prefill and start-up included. */
  hwm: Array<number | undefined>;
}

interface Target {
  endpoints: string[];
  leader: string;
  leaderEndpoint: string;
}

/** Starts the clusters, runs every spec on every system in turns, round by round (so a change in the machine's
 * background load hits all alike), records RSS and stops them. */
async function benchClusters(o: BenchRunOptions): Promise<{ rows: Row[]; memory: MemoryRow[] }> {
  const clusters: BenchCluster[] = [];
  const rows: Row[] = [];
  const memory = new Map<BenchCluster, MemoryRow>();
  const targets = new Map<BenchCluster, Target>();
  // The measured windows per system, so a CPU profile counts only the load (not start-up or other systems' turns).
  const windows = new Map<string, TimeWindow[]>();
  const tool = o.loadgen === 'reference' ? buildReferenceTool() : undefined;
  if (tool) console.log(`load generator: ${tool}`);
  try {
    const starts: Array<{ system: string; start: () => Promise<BenchCluster> }> = o.systems.map((system) => ({
      system,
      start: () => (system === 'svc' ? startSvcCluster({ cpuProfile: o.profile, nodeArgs: o.svcNodeArgs.get('svc') }) : startEtcdCluster()),
    }));
    for (const b of o.svcBuilds) {
      starts.push({ system: `svc ${b.label}`, start: () => startSvcCluster({ cpuProfile: o.profile, buildDir: b.dir, system: `svc ${b.label}`, nodeArgs: o.svcNodeArgs.get(b.label) }) });
    }
    for (const { system, start } of starts) {
      const t0 = Date.now();
      try {
        const c = await start();
        clusters.push(c);
        console.log(`${system}: 3 members up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${c.dir})`);
      } catch (e) {
        console.log(`${system}: cannot start the cluster, skipped: ${(e as Error).message}`);
      }
    }
    for (const c of clusters) {
      try {
        const leader = await c.leader();
        targets.set(c, {
          endpoints: o.target === 'leader' ? [leader.endpoint] : c.members.map((m) => m.endpoint),
          leader: leader.name,
          leaderEndpoint: leader.endpoint,
        });
      } catch (e) {
        console.log(`${c.system}: skipped: ${(e as Error).message}`);
      }
    }
    // Idle RSS once every cluster is up and has a leader, before any load; then the range keyspace.
    await new Promise((r) => setTimeout(r, 1000));
    for (const c of clusters) memory.set(c, { system: c.system, idle: c.members.map((m) => rssBytes(m.pid)), peakBy: {}, hwm: [] });
    if (o.workloads.includes('range')) {
      for (const [c, t] of targets) {
        const t0 = Date.now();
        try {
          await prefillRangeKeys(t.leaderEndpoint);
          console.log(`${c.system}: range keyspace written (${RANGE_KEYS} keys) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        } catch (e) {
          console.log(`${c.system}: cannot write the range keyspace, skipped: ${(e as Error).message}`);
          targets.delete(c);
        }
      }
    }
    const samples = new Map<string, Sample[]>();
    const plan = specs(o);
    for (let round = 1; round <= o.rounds; round++) {
      for (const spec of plan) {
        for (const c of clusters) {
          const t = targets.get(c);
          if (!t) continue;
          const sample = await measure(o, spec, c, t, tool, windows);
          const mem = memory.get(c)!;
          mem.peakBy[spec.workload] = sample.rss.map((v, i) => maxOf(v, mem.peakBy[spec.workload]?.[i]));
          const key = `${c.system}|${specKey(spec)}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
          console.log(`  round ${round} ${c.system.padEnd(4)} ${describe(spec)}: ${sampleLine(spec, sample)}`);
        }
      }
    }
    for (const spec of plan) {
      for (const c of clusters) {
        const s = samples.get(`${c.system}|${specKey(spec)}`);
        if (s?.length) rows.push(combine(c.system, spec, s));
      }
    }
    for (const c of clusters) memory.get(c)!.hwm = c.members.map((m) => peakRssBytes(m.pid));
  } finally {
    for (const c of clusters) {
      const profiles = await c.stop();
      if (o.profile && profiles.length) {
        const root = fileURLToPath(new URL('../../', import.meta.url));
        for (const file of profiles) {
          // A member's other threads (a worker) write node's default names: CPU.<date>.<time>.<pid>.<thread>.<seq>
          const thread = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\./.exec(file.replace(/.*\//, ''));
          const name = thread ? (c.members.find((m) => m.pid === Number(thread[1]))?.name ?? `pid ${thread[1]}`) : file.replace(/.*\//, '').replace('.cpuprofile', '');
          const role = (targets.get(c)?.leader === name ? 'leader' : 'follower') + (thread ? `, thread ${thread[2]}` : '');
          console.log(`\nCPU profile of svc member ${name}, ${role} (${file}):`);
          console.log(formatProfile(summariseProfile(file, root, 25, windows.get(c.system))));
        }
      }
    }
  }
  return { rows, memory: [...memory.values()] };
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

/** Restricts every thread of a process to these CPUs (taskset's list syntax, e.g. "0" or "0,1"). */
function pinTo(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/**
 * --cores-factor: a 1-member cluster of each system; its put throughput with the member allowed 2 cores, then 1
 * core, the two taking turns in each round, after one unmeasured run. The load generator is not pinned: it runs
 * where the kernel puts it (on a 2-core machine it shares the member's cores).
 */
async function coresFactor(o: BenchRunOptions, tool: string | undefined): Promise<string[][]> {
  if (cpus().length < 2) throw new BenchFlagError(`--cores-factor needs at least 2 CPUs; this machine has ${cpus().length}`);
  const table: string[][] = [['system', 'in-flight', 'puts/s on 2 cores', 'puts/s on 1 core', '2-core factor', 'p99 ms 2 / 1 cores', 'member CPU ms/1k puts 2 / 1 cores', 'machine CPU busy 2 / 1 cores']];
  const starts: Array<{ system: string; start: () => Promise<BenchCluster> }> = o.systems.map((system) => ({
    system,
    start: () => (system === 'svc' ? startSvcCluster({ size: 1, nodeArgs: o.svcNodeArgs.get('svc') }) : startEtcdCluster(1)),
  }));
  for (const b of o.svcBuilds) starts.push({ system: `svc ${b.label}`, start: () => startSvcCluster({ size: 1, buildDir: b.dir, system: `svc ${b.label}`, nodeArgs: o.svcNodeArgs.get(b.label) }) });
  const windows = new Map<string, TimeWindow[]>();
  for (const { system, start } of starts) {
    let c: BenchCluster;
    try {
      c = await start();
    } catch (e) {
      console.log(`${system}: cannot start the 1-member cluster, skipped: ${(e as Error).message}`);
      continue;
    }
    try {
      const m = c.members[0];
      const t: Target = { endpoints: [m.endpoint], leader: m.name, leaderEndpoint: m.endpoint };
      await c.leader();
      // one unmeasured run first, so that neither pinning measures a cold start (JIT, caches)
      await measure(o, { workload: 'put', concurrency: o.concurrency[0] }, c, t, tool, windows);
      for (const concurrency of o.concurrency) {
        const spec: Spec = { workload: 'put', concurrency };
        const by: Record<'2' | '1', Sample[]> = { '2': [], '1': [] };
        for (let round = 1; round <= o.rounds; round++) {
          for (const [cores, list] of [['2', '0,1'], ['1', '0']] as const) {
            pinTo(m.pid, list);
            const sample = await measure(o, spec, c, t, tool, windows);
            by[cores].push(sample);
            console.log(`  round ${round} ${system} 1 member on ${cores} core(s), put in-flight ${concurrency}: ${sampleLine(spec, sample)}`);
          }
        }
        const two = combine(system, spec, by['2']);
        const one = combine(system, spec, by['1']);
        table.push([
          systemLabel(system),
          String(concurrency),
          rate(two.result.opsPerSec),
          rate(one.result.opsPerSec),
          (two.result.opsPerSec / one.result.opsPerSec).toFixed(2),
          `${ms(two.result.p99Ms)} / ${ms(one.result.p99Ms)}`,
          `${rate(two.memberCpuMsPer1k)} / ${rate(one.memberCpuMsPer1k)}`,
          `${pct(two.machineBusy)} / ${pct(one.machineBusy)}`,
        ]);
      }
    } catch (e) {
      console.log(`${system}: failed: ${(e as Error).message}`);
    } finally {
      await c.stop();
    }
  }
  return table;
}

/** One run of one spec against one cluster, with its member CPU, RSS and (puts) WAL figures. */
async function measure(o: BenchRunOptions, spec: Spec, c: BenchCluster, t: Target, tool: string | undefined, windows: Map<string, TimeWindow[]>): Promise<Sample> {
  const cpuBefore = c.members.map((m) => cpuTimeMs(m.pid) ?? 0);
  const machineBefore = machineCpuTicks();
  const loadBefore = loadavg()[0];
  const diskBefore = await scrapeDiskMetrics(t.leaderEndpoint);
  const rss = new RssSampler(c.members.map((m) => m.pid));
  const startUs = monotonicUs();
  let result: LoadResult;
  let watch: WatchLoadResult | undefined;
  let verdict: string | undefined;
  // Operations during the whole run (warm-up included), to divide the member CPU by.
  let allOps: number;
  try {
    if (tool) {
      // A watch run that loses events never ends (the tool waits for its count): bound it at 1 ms per event.
      const timeoutMs = spec.workload === 'watch' ? Math.max(120000, o.refWatchPuts * o.watchers) : 600000;
      const out = await runTool(tool, referenceArgs(o, spec, t), timeoutMs);
      result = toLoadResult(parseToolReport(out, spec.workload === 'watch' ? 'Watch events received summary:' : undefined));
      allOps = result.ops;
      if (spec.workload === 'watch') {
        // The tool times the receipt of each event, not its delay from the put, and checks only the total count.
        result = { ...result, p50Ms: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN };
        verdict = 'not checked (reference tool)';
      }
    } else if (spec.workload === 'watch') {
      watch = await runWatchLoad({
        endpoints: t.endpoints,
        writerEndpoint: t.leaderEndpoint,
        watchers: o.watchers,
        streams: o.streams,
        writerInFlight: spec.concurrency,
        durationMs: o.durationMs,
      });
      result = { ops: watch.delivered, errors: watch.writerErrors, firstError: watch.firstError, seconds: watch.seconds, opsPerSec: watch.eventsPerSec, p50Ms: watch.p50Ms, p99Ms: watch.p99Ms, maxMs: Number.NaN };
      allOps = watch.delivered;
      verdict = deliveryVerdict(watch.check) + (watch.drained ? '' : ' (drain timed out)');
      if (!watch.check.ok) console.log(`  watch check: ${watch.check.firstProblem}`);
    } else {
      const load = { endpoints: t.endpoints, concurrency: spec.concurrency, warmupMs: o.warmupMs, durationMs: o.durationMs };
      result = spec.workload === 'put' ? await runPutLoad(load) : await runRangeLoad({ ...load, kind: spec.rangeKind! });
      // Warm-up operations estimated by the measured rate.
      allOps = result.ops + result.opsPerSec * (o.warmupMs / 1000);
    }
  } catch (e) {
    return { failure: (e as Error).message, cpu: Number.NaN, walMs: Number.NaN, putsPerSync: Number.NaN, rss: rss.stop() };
  }
  const peaks = rss.stop();
  const machineBusy = busyShare(machineBefore, machineCpuTicks());
  const measuredFrom = tool || spec.workload === 'watch' ? startUs : startUs + o.warmupMs * 1000;
  windows.set(c.system, [...(windows.get(c.system) ?? []), { startUs: measuredFrom, endUs: monotonicUs() }]);
  const cpuUsed = c.members.reduce((s, m, i) => s + ((cpuTimeMs(m.pid) ?? 0) - cpuBefore[i]), 0);
  const diskAfter = await scrapeDiskMetrics(t.leaderEndpoint);
  const syncs = countBetween(diskBefore.walFsync, diskAfter.walFsync);
  if (tool && spec.workload === 'watch' && o.watchCheck) {
    // The tool only counts events: check exactly-once and in-order delivery with the Node watchers, in a short
    // run of their own after the tool's figures (CPU, RSS) are taken.
    try {
      watch = await runWatchLoad({ endpoints: t.endpoints, writerEndpoint: t.leaderEndpoint, watchers: o.watchers, streams: o.streams, writerInFlight: spec.concurrency, durationMs: 2000 });
      verdict = `${deliveryVerdict(watch.check)}${watch.drained ? '' : ' (drain timed out)'} (checked: Node run, ${watch.puts} puts)`;
      if (!watch.check.ok) console.log(`  watch check: ${watch.check.firstProblem}`);
    } catch (e) {
      verdict = `FAILED: check run: ${(e as Error).message}`;
    }
  }
  return {
    result,
    cpu: allOps > 0 ? (cpuUsed / allOps) * 1000 : Number.NaN,
    walMs: spec.workload === 'put' ? meanMsBetween(diskBefore.walFsync, diskAfter.walFsync) : Number.NaN,
    putsPerSync: spec.workload === 'put' && syncs > 0 ? allOps / syncs : Number.NaN,
    rss: peaks,
    watch,
    verdict,
    machineBusy,
    loadBefore,
  };
}

/** The reference tool's arguments for one spec (connections as the Node generator uses: min(in-flight, 8)). */
export function referenceArgs(o: BenchRunOptions, spec: Spec, t: Target): string[] {
  const conns = Math.min(spec.concurrency, 8);
  if (spec.workload === 'put') {
    return [...toolGlobalArgs(t.endpoints, spec.concurrency, conns), 'put', `--total=${o.refPuts}`, '--val-size=256', `--key-space-size=10000`, '--sequential-keys'];
  }
  if (spec.workload === 'range') {
    const keys = spec.rangeKind === 'prefix' ? prefixRange(0) : [rangeKey(0)];
    const consistency = spec.rangeKind === 'serializable' ? 's' : 'l';
    return [...toolGlobalArgs(t.endpoints, spec.concurrency, conns), 'range', ...keys, `--consistency=${consistency}`, `--total=${o.refRanges}`];
  }
  // The tool's writer runs one put per client in flight, and spreads the streams over the clients' connections.
  return [
    ...toolGlobalArgs(t.endpoints, spec.concurrency, Math.min(spec.concurrency, o.streams)),
    'watch',
    `--streams=${o.streams}`,
    `--watch-per-stream=${o.watchers / o.streams}`,
    '--watched-key-total=1',
    `--put-total=${o.refWatchPuts}`,
    // Its default rate (0) stops the writer; this is "no limit".
    '--put-rate=100000000',
  ];
}

function describe(spec: Spec): string {
  if (spec.workload === 'put') return `put in-flight ${String(spec.concurrency).padStart(3)}`;
  if (spec.workload === 'range') return `range ${rangeKindLabel(spec.rangeKind!)} in-flight ${String(spec.concurrency).padStart(3)}`;
  return `watch fan-out, writer in-flight ${spec.concurrency}`;
}

function sampleLine(spec: Spec, s: Sample): string {
  if (!s.result) return `failed: ${s.failure}`;
  const r = s.result;
  const errs = (r.errors ? `, ${r.errors} errors (${r.firstError})` : '') + (s.machineBusy === undefined ? '' : `, member CPU ${s.cpu.toFixed(0)} ms/1k, machine busy ${(s.machineBusy * 100).toFixed(0)}%, load before ${s.loadBefore?.toFixed(2)}`);
  if (spec.workload === 'put') {
    return `${r.opsPerSec.toFixed(0).padStart(6)} puts/s, p50 ${ms(r.p50Ms)} ms, p99 ${ms(r.p99Ms)} ms, leader WAL sync ${ms(s.walMs)} ms, ${s.putsPerSync.toFixed(1)} puts/sync${errs}`;
  }
  if (spec.workload === 'range') return `${r.opsPerSec.toFixed(0).padStart(6)} ranges/s, p50 ${ms(r.p50Ms)} ms, p99 ${ms(r.p99Ms)} ms${errs}`;
  // With the reference tool, s.watch is the check run's, not the figure's.
  const w = s.watch && !s.verdict?.includes('(checked: Node run') ? s.watch : undefined;
  return `${r.opsPerSec.toFixed(0)} events/s${w ? ` (${w.puts} puts, ${w.delivered} events, delivery p50 ${ms(w.p50Ms)} ms, p99 ${ms(w.p99Ms)} ms)` : ` (${r.ops} events)`}, check ${s.verdict}${errs}`;
}

/** svc/ref: a svc row's figure over the reference's at the same spec. */
function ratio(rows: readonly Row[], r: Row): string {
  const base = rows.find((x) => x.system === 'etcd' && specKey(x.spec) === specKey(r.spec))?.result.opsPerSec;
  return r.system.startsWith('svc') && base && !Number.isNaN(r.result.opsPerSec) ? `${(r.result.opsPerSec / base).toFixed(2)}x` : '';
}

const rate = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(0));
const pct = (v: number) => (Number.isNaN(v) ? '-' : `${(v * 100).toFixed(0)}%`);
const failures = (r: Row) => (r.failedRounds ? `${r.failedRounds} of ${r.rounds} runs failed: ${r.firstFailure}` : '');
/** The put and range tables' middle cells: ops/s, p50 and p99 ms, errors (and failed runs), member CPU ms/1k. */
const loadCells = (r: Row) => [
  rate(r.result.opsPerSec),
  ms(r.result.p50Ms),
  ms(r.result.p99Ms),
  String(r.result.errors) + (r.failedRounds ? ` (${failures(r)})` : ''),
  rate(r.memberCpuMsPer1k),
];

/** The put table: one row per system and concurrency, plus the svc/reference ratio. */
export function putTable(rows: readonly Row[]): string[][] {
  const out: string[][] = [
    ['system', 'in-flight', 'puts/s', 'p50 ms', 'p99 ms', 'errors', 'member CPU ms/1k puts', 'leader WAL sync ms', 'puts/WAL sync', 'machine CPU busy', 'svc/ref'],
  ];
  for (const r of rows.filter((x) => x.spec.workload === 'put')) {
    out.push([
      systemLabel(r.system),
      String(r.spec.concurrency),
      ...loadCells(r),
      ms(r.leaderWalMs),
      Number.isNaN(r.putsPerWalSync) ? '-' : r.putsPerWalSync.toFixed(1),
      pct(r.machineBusy),
      ratio(rows, r),
    ]);
  }
  return out;
}

/** The range table: one row per system, kind and concurrency. */
export function rangeTable(rows: readonly Row[]): string[][] {
  const out: string[][] = [['system', 'range', 'in-flight', 'ranges/s', 'p50 ms', 'p99 ms', 'errors', 'member CPU ms/1k ranges', 'machine CPU busy', 'svc/ref']];
  for (const r of rows.filter((x) => x.spec.workload === 'range')) {
    out.push([
      systemLabel(r.system),
      rangeKindLabel(r.spec.rangeKind!),
      String(r.spec.concurrency),
      ...loadCells(r),
      pct(r.machineBusy),
      ratio(rows, r),
    ]);
  }
  return out;
}

/** The watch fan-out table: events per second, delivery latency, the exactly-once/in-order check. */
export function watchTable(rows: readonly Row[], o: Pick<BenchRunOptions, 'watchers' | 'streams'>): string[][] {
  const out: string[][] = [
    ['system', 'watchers/streams', 'writer in-flight', 'writer puts/s', 'events/s', 'delivery p50 ms', 'delivery p99 ms', 'events delivered', 'missing', 'duplicated', 'out of order', 'check', 'member CPU ms/1k events', 'svc/ref'],
  ];
  for (const r of rows.filter((x) => x.spec.workload === 'watch')) {
    const w = r.watch!;
    out.push([
      systemLabel(r.system),
      `${o.watchers}/${o.streams}`,
      String(r.spec.concurrency),
      rate(w.putsPerSec),
      rate(r.result.opsPerSec),
      ms(r.result.p50Ms),
      ms(r.result.p99Ms),
      String(w.delivered),
      ...(w.verdict.startsWith('not checked') ? ['-', '-', '-'] : [String(w.missing), String(w.duplicated), String(w.outOfOrder)]),
      w.verdict + (w.unexpected && !w.verdict.includes('unexpected') ? ` (${w.unexpected} unexpected)` : '') + (w.writerErrors ? ` (${w.writerErrors} writer errors)` : ''),
      rate(r.memberCpuMsPer1k),
      ratio(rows, r),
    ]);
  }
  return out;
}

/** The table's name for a system: the releases measured, plus the label of an extra svc build. */
function systemLabel(system: string): string {
  if (system === 'etcd') return 'etcd 3.4.23';
  if (system === 'svc') return 'svc 3.4.34';
  return `svc 3.4.34 (${system.slice('svc '.length)})`;
}

/** Member RSS table: one row per member, then the largest member of each system. */
export function memoryTable(memory: readonly MemoryRow[], workloads: readonly Workload[]): string[][] {
  const out: string[][] = [['system', 'member', 'idle MiB', ...workloads.map((w) => `peak under ${w} MiB`), 'VmHWM MiB']];
  for (const m of memory) {
    const cols = [m.idle, ...workloads.map((w) => m.peakBy[w] ?? []), m.hwm];
    for (let i = 0; i < m.idle.length; i++) out.push([systemLabel(m.system), String(i + 1), ...cols.map((c) => mib(c[i]))]);
    const largest = (c: Array<number | undefined>) => c.reduce<number | undefined>((a, b) => maxOf(a, b), undefined);
    out.push([systemLabel(m.system), 'max', ...cols.map((c) => mib(largest(c)))]);
  }
  return out;
}

interface Component {
  title: string;
  module: string;
  fn: string;
}

const COMPONENTS: Component[] = [
  { title: 'raft core', module: './raft.js', fn: 'benchRaft' },
  { title: 'storage engine', module: './engine.js', fn: 'benchEngine' },
  { title: 'mvcc', module: './mvcc.js', fn: 'benchMvcc' },
];

/** Runs each component bench that exists; a missing module or a failure is reported and skipped. */
async function runComponents(): Promise<void> {
  for (const c of COMPONENTS) {
    console.log(`\n== ${c.title} (${c.fn}) ==`);
    const t0 = Date.now();
    try {
      // A computed specifier: tsc must not require the module, since it may not exist yet.
      const spec = new URL(c.module, import.meta.url).href;
      let mod: Record<string, unknown>;
      try {
        mod = (await import(spec)) as Record<string, unknown>;
      } catch (e) {
        console.log(`skipped: ${c.module} is not available (${(e as Error).message.split('\n')[0]})`);
        continue;
      }
      const fn = mod[c.fn];
      if (typeof fn !== 'function') {
        console.log(`skipped: ${c.module} does not export ${c.fn}()`);
        continue;
      }
      const figures = (await (fn as () => Promise<unknown>)()) as unknown;
      if (figures && typeof figures === 'object' && c.fn !== 'benchEngine') {
        for (const [k, v] of Object.entries(figures as Record<string, unknown>)) console.log(`  ${k.padEnd(24)} ${String(v)}`);
      }
      console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      console.log(`failed: ${(e as Error).stack ?? String(e)}`);
    }
  }
}

/** The bench entry point; resolves with the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // `npm run bench -- operator ...`: the operator at scale against a real kube-apiserver (bench/operator.ts)
  if (argv[0] === 'operator') return (await import('./operator.js')).benchOperator(argv.slice(1));
  // `npm run bench -- backup-lag ...`: continuous backup's recovery point (bench/backup-lag.ts)
  if (argv[0] === 'backup-lag') return (await import('./backup-lag.js')).benchBackupLag(argv.slice(1));
  let o: BenchRunOptions;
  try {
    o = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof BenchFlagError)) throw e;
    console.error(`bench: ${e.message}`);
    return 2;
  }
  const started = Date.now();
  console.log(`svc benchmarks, ${new Date().toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${mib(totalmem())} MiB RAM, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (o.coresFactor) {
    const tool = o.loadgen === 'reference' ? buildReferenceTool() : undefined;
    console.log(`cores factor: 1-member clusters, put 256-byte values, load generator ${o.loadgen}, ${o.rounds} rounds, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
    const table = await coresFactor(o, tool);
    console.log(`\n${formatTable(table)}\n\nmarkdown:\n\n${markdownTable(table)}`);
  } else if (o.workloads.length) {
    const runs = o.loadgen === 'reference' ? `${o.refPuts} puts / ${o.refRanges} ranges / ${o.refWatchPuts} watched puts per run` : `warm-up ${o.warmupMs} ms, measured ${o.durationMs} ms per run`;
    const what: Record<Workload, string> = {
      put: 'put: 256-byte values over 10000 keys',
      range: `range: ${RANGE_KEYS} keys of 256 bytes (${o.rangeKinds.map(rangeKindLabel).join('; ')})`,
      watch: `watch: ${o.watchers} watchers of one key over ${o.streams} streams, one writer`,
    };
    console.log(
      `cluster benches (${o.workloads.join(', ')}): 3-member clusters, load generator ${o.loadgen}, target ${o.target}, ${runs}, ${o.rounds} rounds\n` +
        `  ${o.workloads.map((w) => what[w]).join('; ')}\n`,
    );
    let rows: Row[] = [];
    let memory: MemoryRow[] = [];
    try {
      ({ rows, memory } = await benchClusters(o));
    } catch (e) {
      console.log(`cluster bench failed: ${(e as Error).stack ?? String(e)}`);
    }
    const tables: Array<[string, string[][]]> = [];
    if (o.workloads.includes('put')) tables.push(['puts', putTable(rows)]);
    if (o.workloads.includes('range')) tables.push(['ranges', rangeTable(rows)]);
    if (o.workloads.includes('watch')) tables.push(['watch fan-out', watchTable(rows, o)]);
    if (memory.length) tables.push(['member RSS (idle after start; largest VmRSS sampled every 250 ms during each workload; VmHWM at the end)', memoryTable(memory, o.workloads)]);
    const shown = tables.filter(([, t]) => t.length > 1);
    if (shown.length) {
      console.log(`\n${shown.map(([title, t]) => `${title}:\n${formatTable(t)}`).join('\n\n')}`);
      console.log(`\nmarkdown:\n\n${shown.map(([, t]) => markdownTable(t)).join('\n\n')}`);
    }
  }
  if (o.components) await runComponents();
  console.log(`\nbench finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
