// `npm run bench`: put throughput and latency of a 3-member svc cluster against a 3-member reference etcd
// cluster (same machine, same load generator, taking turns round by round), then the component benches that
// exist (raft core, storage engine, mvcc), each on its own so one failing does not stop the rest.
//
// Flags (after `npm run bench --`):
//   --duration=<ms>        measured window per run (default 6000; --warmup=<ms> default 1000)
//   --rounds=<n>           rounds (default 2); the systems take turns, the table shows medians over rounds
//   --concurrency=16,64    puts in flight, one run per value
//   --target=leader|all    send every put to the leader (default) or spread connections over all members
//   --systems=etcd,svc     which clusters to measure
//   --profile              run svc members under node --cpu-prof; print each member's hottest functions (measured windows only)
//   --svc-build=<label>:<dir>  also run a 3-member svc cluster from another build output folder (repeatable), taking
//                          turns with the others: an A/B of two builds in the same run, same machine load
//   --no-components        skip the raft/engine/mvcc benches
//   --components-only      only the component benches
// `npm run bench -- operator [--clusters=500]`: svc-operator reconciling many SvcClusters on a real kube-apiserver
// (bench/operator.ts).
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runPutLoad, type PutLoadResult } from './put.js';
import { startEtcdCluster, startSvcCluster, type BenchCluster } from './lib/cluster.js';
import { cpuTimeMs, formatTable, markdownTable, mib, ms, peakRssBytes } from './lib/stats.js';
import { formatProfile, monotonicUs, summariseProfile, type TimeWindow } from './lib/cpuprofile.js';
import { countBetween, meanMsBetween, scrapeDiskMetrics } from './lib/metrics.js';

/** Parsed command-line options of the bench. */
export interface BenchRunOptions {
  durationMs: number;
  warmupMs: number;
  concurrency: number[];
  target: 'leader' | 'all';
  systems: Array<'etcd' | 'svc'>;
  /** Extra svc builds to compare (label and build output folder). */
  svcBuilds: Array<{ label: string; dir: string }>;
  /** Rounds; each round runs every system at every concurrency once. Figures are medians over rounds. */
  rounds: number;
  profile: boolean;
  components: boolean;
  puts: boolean;
}

/** One measured put run. */
export interface PutRow {
  system: string;
  concurrency: number;
  /** Measured runs combined into this row. */
  rounds: number;
  result: PutLoadResult;
  /** CPU milliseconds all members used per 1000 puts during the measured window. */
  memberCpuMsPer1k: number;
  /** The leader's mean WAL sync latency (ms) during the run, from its /metrics; NaN when not exported. */
  leaderWalMs: number;
  /** Puts per leader WAL sync (how well proposals are batched); NaN when unknown. */
  putsPerWalSync: number;
}

/** One run's figures before combining rounds. */
interface Sample {
  result: PutLoadResult;
  cpu: number;
  walMs: number;
  putsPerSync: number;
}

/** Peak RSS of one cluster's members. */
export interface RssRow {
  system: string;
  peaks: Array<number | undefined>;
}

/** Parses argv (the flags above). */
export function parseArgs(argv: readonly string[]): BenchRunOptions {
  const o: BenchRunOptions = {
    durationMs: 6000,
    warmupMs: 1000,
    rounds: 2,
    concurrency: [16, 64],
    target: 'leader',
    systems: ['etcd', 'svc'],
    svcBuilds: [],
    profile: false,
    components: true,
    puts: true,
  };
  for (const a of argv) {
    const [k, v = ''] = a.split('=', 2);
    if (k === '--duration') o.durationMs = Number(v);
    else if (k === '--warmup') o.warmupMs = Number(v);
    else if (k === '--concurrency') o.concurrency = v.split(',').map(Number);
    else if (k === '--target' && (v === 'leader' || v === 'all')) o.target = v;
    else if (k === '--systems') o.systems = v.split(',').filter((s): s is 'etcd' | 'svc' => s === 'etcd' || s === 'svc');
    else if (k === '--rounds') o.rounds = Math.max(1, Number(v));
    else if (k === '--profile') o.profile = true;
    else if (k === '--svc-build' && v.includes(':')) o.svcBuilds.push({ label: v.slice(0, v.indexOf(':')), dir: v.slice(v.indexOf(':') + 1) });
    else if (k === '--no-components') o.components = false;
    else if (k === '--components-only') o.puts = false;
    else throw new Error(`unknown bench flag ${a}`);
  }
  return o;
}

/** Median of a non-empty list. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Combines the rounds of one system and concurrency: the median of each figure, errors summed. */
function combine(system: string, concurrency: number, rounds: Sample[]): PutRow {
  const r = rounds.map((x) => x.result);
  return {
    system,
    concurrency,
    rounds: r.length,
    result: {
      ops: r.reduce((s, x) => s + x.ops, 0),
      errors: r.reduce((s, x) => s + x.errors, 0),
      firstError: r.find((x) => x.firstError)?.firstError,
      seconds: r.reduce((s, x) => s + x.seconds, 0),
      opsPerSec: median(r.map((x) => x.opsPerSec)),
      p50Ms: median(r.map((x) => x.p50Ms)),
      p99Ms: median(r.map((x) => x.p99Ms)),
      maxMs: Math.max(...r.map((x) => x.maxMs)),
    },
    memberCpuMsPer1k: median(rounds.map((x) => x.cpu)),
    leaderWalMs: median(rounds.map((x) => x.walMs)),
    putsPerWalSync: median(rounds.map((x) => x.putsPerSync)),
  };
}

/** Starts both clusters, then runs the systems alternately (round by round) so a change in the machine's
 * background load hits both alike; records peak RSS and stops them. */
async function benchPuts(o: BenchRunOptions): Promise<{ rows: PutRow[]; rss: RssRow[] }> {
  const clusters: BenchCluster[] = [];
  const rows: PutRow[] = [];
  const rss: RssRow[] = [];
  const targets = new Map<BenchCluster, { endpoints: string[]; leader: string; leaderEndpoint: string }>();
  // The measured windows per system, so a CPU profile counts only the load (not start-up or other systems' turns).
  const windows = new Map<string, TimeWindow[]>();
  try {
    const starts: Array<{ system: string; start: () => Promise<BenchCluster> }> = o.systems.map((system) => ({
      system,
      start: () => (system === 'svc' ? startSvcCluster({ cpuProfile: o.profile }) : startEtcdCluster()),
    }));
    for (const b of o.svcBuilds) {
      starts.push({ system: `svc ${b.label}`, start: () => startSvcCluster({ cpuProfile: o.profile, buildDir: b.dir, system: `svc ${b.label}` }) });
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
    const samples = new Map<string, Sample[]>();
    for (let round = 1; round <= o.rounds; round++) {
      for (const conc of o.concurrency) {
        for (const c of clusters) {
          const t = targets.get(c);
          if (!t) continue;
          const cpuBefore = c.members.map((m) => cpuTimeMs(m.pid) ?? 0);
          const diskBefore = await scrapeDiskMetrics(t.leaderEndpoint);
          let result: PutLoadResult;
          const startUs = monotonicUs();
          try {
            result = await runPutLoad({ endpoints: t.endpoints, concurrency: conc, warmupMs: o.warmupMs, durationMs: o.durationMs });
            windows.set(c.system, [...(windows.get(c.system) ?? []), { startUs: startUs + o.warmupMs * 1000, endUs: monotonicUs() }]);
          } catch (e) {
            console.log(`  round ${round} ${c.system} in-flight ${conc}: failed: ${(e as Error).message}`);
            continue;
          }
          // Member CPU covers warm-up and measured window: divide by the puts of both (warm-up estimated by rate).
          const cpuUsed = c.members.reduce((s, m, i) => s + ((cpuTimeMs(m.pid) ?? 0) - cpuBefore[i]), 0);
          const allPuts = result.ops + result.opsPerSec * (o.warmupMs / 1000);
          const cpu = (cpuUsed / allPuts) * 1000;
          const diskAfter = await scrapeDiskMetrics(t.leaderEndpoint);
          const walMs = meanMsBetween(diskBefore.walFsync, diskAfter.walFsync);
          const syncs = countBetween(diskBefore.walFsync, diskAfter.walFsync);
          const putsPerSync = syncs > 0 ? allPuts / syncs : Number.NaN;
          const key = `${c.system}/${conc}`;
          samples.set(key, [...(samples.get(key) ?? []), { result, cpu, walMs, putsPerSync }]);
          console.log(
            `  round ${round} ${c.system.padEnd(4)} in-flight ${String(conc).padStart(3)}: ${result.opsPerSec.toFixed(0).padStart(6)} puts/s, ` +
              `p50 ${ms(result.p50Ms)} ms, p99 ${ms(result.p99Ms)} ms, leader WAL sync ${ms(walMs)} ms, ${putsPerSync.toFixed(1)} puts/sync` +
              (result.errors ? `, ${result.errors} errors (${result.firstError})` : ''),
          );
        }
      }
    }
    for (const conc of o.concurrency) {
      for (const c of clusters) {
        const s = samples.get(`${c.system}/${conc}`);
        if (s?.length) rows.push(combine(c.system, conc, s));
      }
    }
    for (const c of clusters) rss.push({ system: c.system, peaks: c.members.map((m) => peakRssBytes(m.pid)) });
  } finally {
    for (const c of clusters) {
      const profiles = await c.stop();
      if (o.profile && profiles.length) {
        const root = fileURLToPath(new URL('../../', import.meta.url));
        for (const file of profiles) {
          const name = file.replace(/.*\//, '').replace('.cpuprofile', '');
          const role = targets.get(c)?.leader === name ? 'leader' : 'follower';
          console.log(`\nCPU profile of svc member ${name}, ${role} (${file}):`);
          console.log(formatProfile(summariseProfile(file, root, 25, windows.get(c.system))));
        }
      }
    }
  }
  return { rows, rss };
}

/** The comparison table rows: one per system and concurrency, plus the svc/reference ratio. */
export function putTable(rows: readonly PutRow[]): string[][] {
  const out: string[][] = [
    ['system', 'in-flight', 'puts/s', 'p50 ms', 'p99 ms', 'errors', 'member CPU ms/1k puts', 'leader WAL sync ms', 'puts/WAL sync', 'svc/ref'],
  ];
  const ref = new Map(rows.filter((r) => r.system === 'etcd').map((r) => [r.concurrency, r.result.opsPerSec]));
  for (const r of rows) {
    const base = ref.get(r.concurrency);
    const ratio = r.system.startsWith('svc') && base ? `${(r.result.opsPerSec / base).toFixed(2)}x` : '';
    out.push([
      systemLabel(r.system),
      String(r.concurrency),
      r.result.opsPerSec.toFixed(0),
      ms(r.result.p50Ms),
      ms(r.result.p99Ms),
      String(r.result.errors),
      r.memberCpuMsPer1k.toFixed(0),
      ms(r.leaderWalMs),
      Number.isNaN(r.putsPerWalSync) ? '-' : r.putsPerWalSync.toFixed(1),
      ratio,
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

/** Peak RSS table: each member and the largest. */
export function rssTable(rss: readonly RssRow[]): string[][] {
  const out: string[][] = [['system', 'member 1 MiB', 'member 2 MiB', 'member 3 MiB', 'max MiB']];
  for (const r of rss) {
    const known = r.peaks.filter((p): p is number => p !== undefined);
    out.push([systemLabel(r.system), ...r.peaks.map(mib), mib(known.length ? Math.max(...known) : undefined)]);
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
  const o = parseArgs(argv);
  const started = Date.now();
  console.log(`svc benchmarks, ${new Date().toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${mib(totalmem())} MiB RAM, node ${process.version}`);
  if (o.puts) {
    console.log(
      `put bench: 3-member clusters, 256-byte values over 10000 keys, target ${o.target}, warm-up ${o.warmupMs} ms, measured ${o.durationMs} ms per run, ${o.rounds} rounds\n`,
    );
    let rows: PutRow[] = [];
    let rss: RssRow[] = [];
    try {
      ({ rows, rss } = await benchPuts(o));
    } catch (e) {
      console.log(`put bench failed: ${(e as Error).stack ?? String(e)}`);
    }
    if (rows.length) {
      console.log(`\n${formatTable(putTable(rows))}\n\npeak RSS (VmHWM) of the member processes:\n${formatTable(rssTable(rss))}`);
      console.log(`\nmarkdown:\n\n${markdownTable(putTable(rows))}\n\n${markdownTable(rssTable(rss))}`);
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
