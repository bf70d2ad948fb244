// The bench's Node load generators against real clusters (a 1-member svc and a 1-member reference etcd): the
// range generator checks the keys it gets back, and the watch fan-out generator's check passes when every watcher
// got every event of the writer (the failure cases of that check are in test/unit/bench/watch-check.test.ts).
import { expect } from 'chai';
import { startEtcdCluster, startSvcCluster, type BenchCluster } from '../../../bench/lib/cluster.js';
import { LoadError } from '../../../bench/lib/load.js';
import { prefillRangeKeys, runRangeLoad } from '../../../bench/range.js';
import { runWatchLoad } from '../../../bench/watch.js';

for (const system of ['svc', 'etcd'] as const) {
  describe(`bench load generators against ${system}`, function () {
    this.timeout(120000);
    let cluster: BenchCluster;
    let endpoint: string;

    before(async () => {
      cluster = system === 'svc' ? await startSvcCluster({ size: 1 }) : await startEtcdCluster(1);
      endpoint = cluster.members[0].endpoint;
    });
    after(async () => {
      await cluster?.stop();
    });

    it('range: an empty keyspace fails every request with a message naming the missing key', async () => {
      let error: unknown;
      try {
        await runRangeLoad({ endpoints: [endpoint], kind: 'serializable', concurrency: 2, warmupMs: 0, durationMs: 200 });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(LoadError);
      expect((error as Error).message).to.match(/every request failed .*range \/bench\/range\/\d{8} returned 0 keys, want 1 \(keyspace not filled\?\)/);
    });

    it('range: gets and prefix ranges on the filled keyspace answer with their keys, no errors', async () => {
      await prefillRangeKeys(endpoint);
      for (const kind of ['serializable', 'linearizable', 'prefix'] as const) {
        const r = await runRangeLoad({ endpoints: [endpoint], kind, concurrency: 4, warmupMs: 100, durationMs: 300 });
        expect(r.errors, `${kind}: ${r.firstError}`).to.equal(0);
        expect(r.ops).to.be.greaterThan(0);
        expect(r.p99Ms).to.be.at.least(r.p50Ms);
      }
    });

    it('watch: every watcher gets every acknowledged put once, in order', async () => {
      const r = await runWatchLoad({ endpoints: [endpoint], writerEndpoint: endpoint, watchers: 40, streams: 4, writerInFlight: 2, durationMs: 500 });
      expect(r.check.firstProblem).to.equal(undefined);
      expect(r.check.ok).to.equal(true);
      expect(r.drained).to.equal(true);
      expect(r.writerErrors).to.equal(0);
      expect(r.puts).to.be.greaterThan(0);
      expect(r.check.expectedPerWatcher).to.equal(r.puts);
      expect(r.delivered).to.equal(r.puts * 40);
    });
  });
}
