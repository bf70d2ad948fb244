import { expect } from 'chai';
import { combine, parseArgs, specs, memoryTable, watchTable, type Sample } from '../../../bench/run.js';
import { prefixRange, rangeKey } from '../../../bench/range.js';
import { busyShare, machineCpuTicks, median, quantile } from '../../../bench/lib/stats.js';
import { parseToolReport } from '../../../bench/lib/reference-loadgen.js';
import { checkDeliveries } from '../../../bench/lib/watch-check.js';

// The report layout of etcd v3.5.21's tools/benchmark (pkg/report) with --precise, as it prints it.
const PUT_REPORT = `\r 0 / 500    0.00%\r 500 / 500  100.00% 0s

Summary:
  Total:\t0.198800 secs.
  Slowest:\t0.008600 secs.
  Fastest:\t0.000400 secs.
  Average:\t0.001600 secs.
  Stddev:\t0.001300 secs.
  Requests/sec:\t2514.4949

Response time histogram:
  0.0004 [1]\t|
  0.0012 [272]\t|∎∎∎∎

Latency distribution:
  10% in 0.0007 secs.
  50% in 0.0012 secs.
  99% in 0.0072 secs.

Error distribution:
  [3]\trpc error: code = Unavailable desc = etcdserver: leader changed
  [1]\tcontext deadline exceeded
`;

const WATCH_REPORT = `Watch creation summary:

Summary:
  Total:\t0.1356 secs.
  Slowest:\t0.0101 secs.
  Fastest:\t0.0001 secs.
  Average:\t0.0013 secs.
  Stddev:\t0.0014 secs.
  Requests/sec:\t7373.29

Latency distribution:
  50% in 0.0011 secs.
  99% in 0.0090 secs.
Watch events received summary:

Summary:
  Total:\t0.644253661 secs.
  Slowest:\t0.000751872 secs.
  Fastest:\t4e-08 secs.
  Average:\t1.06e-07 secs.
  Stddev:\t4.4e-06 secs.
  Requests/sec:\t77609.18257319767

Latency distribution:
`;

describe('bench: figures (flags, stats, the reference tool report, combining rounds)', () => {
  it('nearest-rank quantiles and medians', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(quantile(sorted, 0.5)).to.equal(5);
    expect(quantile(sorted, 0.99)).to.equal(10);
    expect(Number.isNaN(quantile([], 0.5))).to.equal(true);
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 2, 3])).to.equal(2.5);
    expect(Number.isNaN(median([]))).to.equal(true);
  });

  it('parses the tool report: rate, time, p50/p99 in ms, errors summed', () => {
    const r = parseToolReport(PUT_REPORT);
    expect(r.seconds).to.equal(0.1988);
    expect(r.opsPerSec).to.equal(2514.4949);
    expect(r.p50Ms).to.be.closeTo(1.2, 1e-9);
    expect(r.p99Ms).to.be.closeTo(7.2, 1e-9);
    expect(r.maxMs).to.be.closeTo(8.6, 1e-9);
    expect(r.errors).to.equal(4);
    expect(r.firstError).to.equal('rpc error: code = Unavailable desc = etcdserver: leader changed');
  });

  it('reads the watch events section, not the watch creation one', () => {
    const r = parseToolReport(WATCH_REPORT, 'Watch events received summary:');
    expect(r.opsPerSec).to.equal(77609.18257319767);
    expect(r.seconds).to.equal(0.644253661);
    expect(Number.isNaN(r.p50Ms)).to.equal(true);
    expect(r.errors).to.equal(0);
  });

  it('refuses output without a summary, with the output in the message', () => {
    expect(() => parseToolReport('panic: rate: Wait(n=1) exceeds limiter burst')).to.throw(/printed no summary:\npanic/);
    expect(() => parseToolReport(PUT_REPORT, 'Watch events received summary:')).to.throw(/no "Watch events received summary:" section/);
  });

  it('the machine busy share: busy ticks over all ticks between two readings of /proc/stat', () => {
    expect(busyShare({ busy: 100, total: 1000 }, { busy: 250, total: 1200 })).to.equal(0.75);
    expect(Number.isNaN(busyShare({ busy: 1, total: 1 }, { busy: 1, total: 1 }))).to.equal(true);
    const now = machineCpuTicks();
    expect(now.total).to.be.greaterThan(0);
    expect(now.busy).to.be.within(0, now.total);
  });

  it('parses the flags, with a clear error for a bad one', () => {
    const o = parseArgs(['--workloads=range,watch', '--range=serializable', '--concurrency=16,64', '--watchers=100', '--streams=10', '--no-components']);
    expect(o.workloads).to.deep.equal(['range', 'watch']);
    expect(o.components).to.equal(false);
    expect(specs(o)).to.deep.equal([
      { workload: 'range', rangeKind: 'serializable', concurrency: 16 },
      { workload: 'range', rangeKind: 'serializable', concurrency: 64 },
      { workload: 'watch', concurrency: 1 },
    ]);
    expect(parseArgs([]).workloads).to.deep.equal(['put', 'range', 'watch']);
    expect(parseArgs(['--components-only']).workloads).to.deep.equal([]);
    expect(() => parseArgs(['--workloads=put,lease'])).to.throw(/--workloads: expected a comma-separated list of put, range, watch; got "put,lease"/);
    expect(() => parseArgs(['--rounds=0'])).to.throw(/--rounds: expected a positive integer/);
    expect(() => parseArgs(['--loadgen=reference', '--watchers=1000', '--streams=3'])).to.throw(/multiple of --streams/);
    expect(() => parseArgs(['--bogus'])).to.throw(/unknown bench flag --bogus/);
    expect(() => parseArgs(['--loadgen=go'])).to.throw(/--loadgen: expected node or reference; got "go"/);
    expect(parseArgs(['--loadgen=reference']).loadgen).to.equal('reference');
    expect(parseArgs(['--cores-factor']).coresFactor).to.equal(true);
    expect(parseArgs([]).coresFactor).to.equal(false);
    // a value may hold '=' itself (node flags for one cluster of an A/B)
    const ab = parseArgs(['--svc-build=b:dist', '--svc-node-args=b:--max-semi-space-size=32 --no-opt']);
    expect(ab.svcBuilds).to.deep.equal([{ label: 'b', dir: 'dist' }]);
    expect(ab.svcNodeArgs.get('b')).to.deep.equal(['--max-semi-space-size=32', '--no-opt']);
  });

  it('prefix ranges cover exactly 10 keys of the keyspace', () => {
    const [start, end] = prefixRange(42);
    const inRange = (k: string) => k >= start && k < end;
    const covered = Array.from({ length: 10000 }, (_, i) => rangeKey(i)).filter(inRange);
    expect(covered).to.deep.equal(Array.from({ length: 10 }, (_, i) => rangeKey(420 + i)));
    const [s999, e999] = prefixRange(999);
    expect(Array.from({ length: 10000 }, (_, i) => rangeKey(i)).filter((k) => k >= s999 && k < e999)).to.have.length(10);
  });

  it('combines rounds: medians of figures, a failed watch check kept in the table', () => {
    const load = (opsPerSec: number, p99Ms: number, ops: number) => ({ ops, errors: 0, seconds: 1, opsPerSec, p50Ms: 1, p99Ms, maxMs: p99Ms });
    const watch = (revs: number[][]) => {
      const check = checkDeliveries([1, 2], revs);
      return { watchers: revs.length, streams: 1, puts: 2, writerErrors: 0, putsPerSec: 2, delivered: revs.flat().length, eventsPerSec: 4, p50Ms: 1, p99Ms: 2, seconds: 1, drained: true, check };
    };
    const rounds: Sample[] = [
      { result: load(100, 9, 4), cpu: 10, walMs: Number.NaN, putsPerSync: Number.NaN, rss: [1], watch: watch([[1, 2], [1, 2]]), verdict: 'ok' },
      { result: load(300, 5, 3), cpu: 30, walMs: Number.NaN, putsPerSync: Number.NaN, rss: [1], watch: watch([[1, 2], [2]]), verdict: 'FAILED (1 watchers: 1 missing)' },
      { failure: 'connect: timeout', cpu: Number.NaN, walMs: Number.NaN, putsPerSync: Number.NaN, rss: [] },
    ];
    const row = combine('svc', { workload: 'watch', concurrency: 1 }, rounds);
    expect(row.result.opsPerSec).to.equal(200);
    expect(row.result.p99Ms).to.equal(7);
    expect(row.memberCpuMsPer1k).to.equal(20);
    expect(row.failedRounds).to.equal(1);
    expect(row.watch).to.include({ delivered: 7, missing: 1, puts: 4 });
    expect(row.watch!.verdict).to.equal('FAILED (1 watchers: 1 missing); FAILED: connect: timeout');
    const table = watchTable([row], { watchers: 2, streams: 1 });
    expect(table[1]).to.include('FAILED (1 watchers: 1 missing); FAILED: connect: timeout');
    expect(table[1].slice(7, 11)).to.deep.equal(['7', '1', '0', '0']);
  });

  it('with the reference tool: its event count, and the verdict and counts of the check run', () => {
    const load = { ops: 200000, errors: 0, seconds: 2, opsPerSec: 100000, p50Ms: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN };
    const check = checkDeliveries([1, 2], [[1, 2]]);
    const w = { watchers: 1, streams: 1, puts: 2, writerErrors: 0, putsPerSec: 2, delivered: 2, eventsPerSec: 4, p50Ms: 1, p99Ms: 2, seconds: 1, drained: true, check };
    const row = combine('etcd', { workload: 'watch', concurrency: 1 }, [{ result: load, cpu: 1, walMs: Number.NaN, putsPerSync: Number.NaN, rss: [], watch: w, verdict: 'ok (checked: Node run, 2 puts)' }]);
    const table = watchTable([row], { watchers: 1, streams: 1 });
    expect(table[1].slice(3, 12)).to.deep.equal(['-', '100000', '-', '-', '200000', '0', '0', '0', 'ok (checked: Node run, 2 puts)']);
    const unchecked = combine('etcd', { workload: 'watch', concurrency: 1 }, [{ result: load, cpu: 1, walMs: Number.NaN, putsPerSync: Number.NaN, rss: [], verdict: 'not checked (reference tool)' }]);
    expect(watchTable([unchecked], { watchers: 1, streams: 1 })[1].slice(8, 12)).to.deep.equal(['-', '-', '-', 'not checked (reference tool)']);
  });

  it('the memory table shows each member and the largest, idle and per workload', () => {
    const MiB = 1024 * 1024;
    const t = memoryTable([{ system: 'etcd', idle: [10 * MiB, 12 * MiB], peakBy: { put: [20 * MiB, undefined] }, hwm: [30 * MiB, 31 * MiB] }], ['put', 'watch']);
    expect(t[0]).to.deep.equal(['system', 'member', 'idle MiB', 'peak under put MiB', 'peak under watch MiB', 'VmHWM MiB']);
    expect(t[1]).to.deep.equal(['etcd 3.4.23', '1', '10.0', '20.0', '-', '30.0']);
    expect(t[2]).to.deep.equal(['etcd 3.4.23', '2', '12.0', '-', '-', '31.0']);
    expect(t[3]).to.deep.equal(['etcd 3.4.23', 'max', '12.0', '20.0', '-', '31.0']);
  });
});
