// `npm run bench`: put throughput and latency of a 3-member svc cluster against a 3-member reference etcd
// cluster (same machine, same load generator, one after the other), then the component benches that
// exist (raft core, storage engine, mvcc), each on its own so one failing does not stop the rest.
//
// Flags (after `npm run bench --`):
//   --duration=<ms>        measured window per run (default 8000; warm-up 1500)
//   --concurrency=16,64    puts in flight, one run per value
//   --target=leader|all    send every put to the leader (default) or spread connections over all members
//   --systems=etcd,svc     which clusters to measure
//   --profile              run svc members under node --cpu-prof and print the leader's hottest functions
//   --no-components        skip the raft/engine/mvcc benches
//   --components-only      only the component benches
import { cpus, totalmem } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPutLoad, type PutLoadResult } from './put.js';
import { startEtcdCluster, startSvcCluster, type BenchCluster } from './lib/cluster.js';
import { cpuTimeMs, formatTable, markdownTable, mib, ms, peakRssBytes } from './lib/stats.js';
import { formatProfile, summariseProfile } from './lib/cpuprofile.js';

/** Parsed command-line options of the bench. */
export interface BenchRunOptions {
  durationMs: number;
  warmupMs: number;
  concurrency: number[];
  target: 'leader' | 'all';
  systems: Array<'etcd' | 'svc'>;
  profile: boolean;
  components: boolean;
  puts: boolean;
}

/** One measured put run. */
export interface PutRow {
  system: string;
  concurrency: number;
  result: PutLoadResult;
  /** CPU milliseconds all members used per 1000 puts during the measured window. */
  memberCpuMsPer1k: number;
}

/** Peak RSS of one cluster's members. */
export interface RssRow {
  system: string;
  peaks: Array<number | undefined>;
}

/** Parses argv (the flags above). */
export function parseArgs(argv: readonly string[]): BenchRunOptions {
  const o: BenchRunOptions = {
    durationMs: 8000,
    warmupMs: 1500,
    concurrency: [16, 64],
    target: 'leader',
    systems: ['etcd', 'svc'],
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
    else if (k === '--profile') o.profile = true;
    else if (k === '--no-components') o.components = false;
    else if (k === '--components-only') o.puts = false;
    else throw new Error(`unknown bench flag ${a}`);
  }
  return o;
}

/** Measures one system: starts its cluster, runs every concurrency level, records peak RSS, stops it. */
async function benchSystem(system: 'etcd' | 'svc', o: BenchRunOptions, rows: PutRow[], rss: RssRow[]): Promise<void> {
  const t0 = Date.now();
  const cluster: BenchCluster = system === 'svc' ? await startSvcCluster({ cpuProfile: o.profile }) : await startEtcdCluster();
  console.log(`${system}: 3 members up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${cluster.dir})`);
  let profiles: string[];
  let leaderName = '';
  try {
    const leader = await cluster.leader();
    leaderName = leader.name;
    const endpoints = o.target === 'leader' ? [leader.endpoint] : cluster.members.map((m) => m.endpoint);
    for (const c of o.concurrency) {
      const cpuBefore = cluster.members.map((m) => cpuTimeMs(m.pid) ?? 0);
      const result = await runPutLoad({ endpoints, concurrency: c, warmupMs: o.warmupMs, durationMs: o.durationMs });
      // The warm-up is inside the CPU window too; scale by the measured share of puts is not possible,
      // so count the whole window's CPU against the measured puts plus the warm-up's (estimated by rate).
      const cpuUsed = cluster.members.reduce((s, m, i) => s + ((cpuTimeMs(m.pid) ?? 0) - cpuBefore[i]), 0);
      const estimatedTotalPuts = result.ops + result.opsPerSec * (o.warmupMs / 1000);
      rows.push({ system, concurrency: c, result, memberCpuMsPer1k: (cpuUsed / estimatedTotalPuts) * 1000 });
      console.log(
        `  ${system} in-flight ${c}: ${result.opsPerSec.toFixed(0)} puts/s, p50 ${ms(result.p50Ms)} ms, p99 ${ms(result.p99Ms)} ms` +
          (result.errors ? `, ${result.errors} errors (${result.firstError})` : ''),
      );
    }
    rss.push({ system, peaks: cluster.members.map((m) => peakRssBytes(m.pid)) });
  } finally {
    profiles = await cluster.stop();
  }
  if (o.profile && profiles.length) {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const file = profiles.find((p) => p.includes(`${leaderName}.cpuprofile`)) ?? profiles[0];
    console.log(`\nCPU profile of the svc leader ${leaderName} (${relative(process.cwd(), file)}):`);
    console.log(formatProfile(summariseProfile(file, root)));
  }
}

/** The comparison table rows: one per system and concurrency, plus the svc/reference ratio. */
export function putTable(rows: readonly PutRow[]): string[][] {
  const out: string[][] = [['system', 'in-flight', 'puts/s', 'p50 ms', 'p99 ms', 'errors', 'member CPU ms/1k puts', 'svc/ref']];
  const ref = new Map(rows.filter((r) => r.system === 'etcd').map((r) => [r.concurrency, r.result.opsPerSec]));
  for (const r of rows) {
    const base = ref.get(r.concurrency);
    const ratio = r.system === 'svc' && base ? `${(r.result.opsPerSec / base).toFixed(2)}x` : '';
    out.push([
      r.system === 'etcd' ? 'etcd 3.4.23' : 'svc 3.4.34',
      String(r.concurrency),
      r.result.opsPerSec.toFixed(0),
      ms(r.result.p50Ms),
      ms(r.result.p99Ms),
      String(r.result.errors),
      r.memberCpuMsPer1k.toFixed(0),
      ratio,
    ]);
  }
  return out;
}

/** Peak RSS table: each member and the largest. */
export function rssTable(rss: readonly RssRow[]): string[][] {
  const out: string[][] = [['system', 'member 1 MiB', 'member 2 MiB', 'member 3 MiB', 'max MiB']];
  for (const r of rss) {
    const known = r.peaks.filter((p): p is number => p !== undefined);
    out.push([r.system === 'etcd' ? 'etcd 3.4.23' : 'svc 3.4.34', ...r.peaks.map(mib), mib(known.length ? Math.max(...known) : undefined)]);
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
  const o = parseArgs(argv);
  const started = Date.now();
  console.log(`svc benchmarks, ${new Date().toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${mib(totalmem())} MiB RAM, node ${process.version}`);
  if (o.puts) {
    console.log(
      `put bench: 3-member clusters, 256-byte values over 10000 keys, target ${o.target}, warm-up ${o.warmupMs} ms, measured ${o.durationMs} ms per run\n`,
    );
    const rows: PutRow[] = [];
    const rss: RssRow[] = [];
    for (const s of o.systems) {
      try {
        await benchSystem(s, o, rows, rss);
      } catch (e) {
        console.log(`${s}: put bench failed: ${(e as Error).message}`);
      }
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
