// The Downgrade API against real processes: the reference's own `etcdctl downgrade validate|enable|cancel` (3.6.16,
// 3.7.3) against a svc member and a reference member of the same release, side by side, with the same answers to
// every action and refusal; 3.5's answers through the gateway; then whole 3-member svc clusters taken 3.6 -> 3.5 and
// 3.7 -> 3.6 in place (refused without a job; enable, followers then the leader restarted one minor lower on their
// data dirs) under a writer.

import { expect } from 'chai';
import { releaseFor } from '../../../server/releases.js';
import { etcdctl, type EtcdctlResult } from '../../../harness/etcdctl.js';
import { httpGet, sleep } from '../../../harness/process.js';
import { referenceBin, startReferenceCluster, type ReferenceLine } from '../../../harness/reference-cluster.js';
import { useClustersSideBySide, type ClustersSideBySide } from '../../../harness/side-by-side.js';
import { postJson, printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { HarnessError } from '../../../harness/errors.js';
import { V35, expectExit, getVersion, linesMatching, startWriter, waitClusterVersion } from './helpers.js';

const ZAP_FLAGS = ['--logger=zap', '--log-outputs=stderr'];
const V36 = '3.6.16';

/** What a user sees of an etcdctl run: exit status, stdout, and the error line. */
const seen = (r: EtcdctlResult) => ({ code: r.code, stdout: r.stdout, error: r.stderr.split('\n').filter((l) => l.startsWith('Error:')) });

/** Waits until /version of `clientURL` reports the cluster version `cluster` ("3.5.0"). */
async function waitVersion(clientURL: string, cluster: string, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const v = await getVersion(clientURL).catch(() => undefined);
    if (v?.etcdcluster === cluster) return;
    last = JSON.stringify(v);
    await sleep(300);
  }
  throw new HarnessError('TIMEOUT', `${clientURL}/version not at cluster version ${cluster} within ${timeoutMs} ms (last ${last})`);
}

/** One-member svc and reference clusters of a release for one suite, started at once; both at cluster version `cluster`. */
function usePair(svcVersion: string, line: ReferenceLine, cluster: string): ClustersSideBySide {
  const pair = useClustersSideBySide(() => [
    startSvcCluster({ size: 1, version: svcVersion, extraArgs: ZAP_FLAGS, timeoutMs: 60000 }),
    startReferenceCluster({ size: 1, binary: referenceBin(line, 'etcd'), timeoutMs: 60000 }),
  ]);
  before(() => Promise.all([waitVersion(pair.svc.members[0].clientURL, cluster), waitVersion(pair.ref.clientUrls[0], cluster)]));
  return pair;
}

for (const [line, svcVersion, higher, lower, twoDown] of [['3.6', V36, '3.6', '3.5', '3.4'], ['3.7', '3.7.3', '3.7', '3.6', '3.5']] as const) {
  describe(`releases: the Downgrade API of ${line}, svc and the reference ${svcVersion} side by side (real processes)`, function () {
    this.timeout(180000);
    const p = usePair(svcVersion, line, `${higher}.0`);

    /** The same `etcdctl downgrade ...` against both: the same answer, returned. */
    const both = async (args: string[]) => {
      const bin = referenceBin(line, 'etcdctl');
      const [s, r] = await Promise.all([etcdctl(['downgrade', ...args], { endpoints: [p.svc.members[0].endpoint], bin }), etcdctl(['downgrade', ...args], { endpoints: p.ref.endpoints, bin })]);
      expect(seen(s), `svc: etcdctl downgrade ${args.join(' ')}`).to.deep.equal(seen(r));
      return seen(s);
    };

    it('VALIDATE: one minor down succeeds; a bad format, two minors down and the same minor are refused', async () => {
      expect((await both(['validate', lower])).stdout).to.equal(`Downgrade validate success, cluster version ${higher}\n`);
      expect((await both(['validate', `${lower}.2`])).code).to.equal(0);
      expect((await both(['validate', `v${lower}`])).error).to.deep.equal(['Error: etcdserver: wrong downgrade target version format']);
      expect((await both(['validate', twoDown])).error).to.deep.equal(['Error: etcdserver: invalid downgrade target version']);
      expect((await both(['validate', higher])).error).to.deep.equal(['Error: etcdserver: invalid downgrade target version']);
    });

    it('CANCEL without a job answers success', async () => {
      expect((await both(['cancel'])).stdout).to.equal(`Downgrade cancel success, cluster version ${higher}\n`);
    });

    it('ENABLE starts the job; the cluster version goes down to the target; a second job is refused; CANCEL ends it and the version goes back up', async () => {
      expect((await both(['enable', lower])).stdout).to.equal(`Downgrade enable success, cluster version ${higher}\n`);
      await Promise.all([waitVersion(p.svc.members[0].clientURL, `${lower}.0`), waitVersion(p.ref.clientUrls[0], `${lower}.0`)]);
      expect(linesMatching(p.svc.currentLog(0), /"msg":"Cluster version downgrade detected, forcing snapshot"/)).to.have.length(1);
      // the peer endpoint a joining member asks
      expect((await httpGet(`${p.svc.members[0].peerURL}/downgrade/enabled`)).body).to.equal('true');
      // one minor below the lowered version is a valid target, but a job is in progress
      expect((await both(['validate', twoDown])).error).to.deep.equal(['Error: etcdserver: cluster has a downgrade job in progress']);
      expect((await both(['enable', twoDown])).error).to.deep.equal(['Error: etcdserver: cluster has a downgrade job in progress']);
      expect((await both(['cancel'])).stdout).to.equal(`Downgrade cancel success, cluster version ${lower}\n`);
      expect((await httpGet(`${p.svc.members[0].peerURL}/downgrade/enabled`)).body).to.equal('false');
      await Promise.all([waitVersion(p.svc.members[0].clientURL, `${higher}.0`), waitVersion(p.ref.clientUrls[0], `${higher}.0`)]);
      expect((await both(['validate', lower])).stdout).to.equal(`Downgrade validate success, cluster version ${higher}\n`);
    });
  });
}

describe('releases: the Downgrade API of 3.5, svc and the reference 3.5.21 side by side (real processes)', function () {
  this.timeout(120000);
  const p = usePair(V35, '3.5', '3.5.0');

  /** The same POST /v3/maintenance/downgrade to both: the same status, version and message. */
  const both = async (body: object) => {
    const [s, r] = await Promise.all([p.svc.members[0].clientURL, p.ref.clientUrls[0]].map((u) => postJson(`${u}/v3/maintenance/downgrade`, body)));
    const view = (a: typeof s) => ({ status: a.status, version: a.body.version, message: a.body.message });
    expect(view(s), `svc: ${JSON.stringify(body)}`).to.deep.equal(view(r));
    return view(s);
  };

  it('VALIDATE answers the full cluster version; CANCEL without a job is an error', async () => {
    expect(await both({ action: 0, version: '3.4' })).to.deep.equal({ status: 200, version: '3.5.0', message: undefined });
    expect((await both({ action: 0, version: '3.0' })).message).to.equal('etcdserver: invalid downgrade target version');
    expect((await both({ action: 0, version: 'x' })).message).to.equal('etcdserver: wrong downgrade target version format');
    expect((await both({ action: 2 })).message).to.equal('etcdserver: no inflight downgrade job');
  });
});

for (const [from, to, lowerMinor] of [[V36, V35, '3.5'], ['3.7.3', V36, '3.6']] as const) {
  const higherMinor = from.split('.').slice(0, 2).join('.');
  describe(`releases: a 3-member svc cluster downgraded ${higherMinor} -> ${lowerMinor} in place under a writer (real processes)`, function () {
    this.timeout(300000);
    let c: SvcCluster;
    printLogsOnFailure(() => [c]);

    before(async function () {
      this.timeout(90000);
      c = await startSvcCluster({ size: 3, version: from, extraArgs: ZAP_FLAGS, timeoutMs: 60000 });
      await waitClusterVersion(c, `${higherMinor}.0`);
    });

    after(async function () {
      this.timeout(60000);
      await c?.close();
    });

    it(`without a job a ${lowerMinor} member is refused; it restarts fine on ${higherMinor}`, async () => {
      const leader = await c.leader();
      const i = [0, 1, 2].find((j) => j !== leader)!;
      await c.stop(i);
      await c.start(i, { version: to, extraArgs: ZAP_FLAGS, waitHealthy: false, expectExit: true });
      const st = await expectExit(c.members[i].process, 40000);
      expect(st.code, `${c.members[i].name} exit code`).to.be.a('number').and.not.equal(0);
      expect(linesMatching(c.currentLog(i), /invalid downgrade; server version is lower than determined cluster version/)).to.not.deep.equal([]);
      await c.start(i, { version: from, extraArgs: ZAP_FLAGS });
      await c.waitHealthy();
    });

    it(`enable, followers then the leader restarted as ${lowerMinor}: every member answers ${lowerMinor}, the job is cleared, no acknowledged write lost`, async () => {
      const bin = referenceBin(higherMinor as ReferenceLine, 'etcdctl');
      const endpoints = c.members.map((m) => m.endpoint);
      for (let k = 0; k < 20; k++) await c.put(k % 3, `before/${k}`, `v${k}`);
      const writer = startWriter(c, 'during/');

      const enable = await etcdctl(['downgrade', 'enable', lowerMinor], { endpoints, bin });
      expect(enable.stdout, enable.stderr).to.equal(`Downgrade enable success, cluster version ${higherMinor}\n`);
      await waitClusterVersion(c, `${lowerMinor}.0`);
      const leader = await c.leader();
      for (const i of [...[0, 1, 2].filter((j) => j !== leader), leader]) {
        await c.stop(i);
        await c.start(i, { version: to, extraArgs: ZAP_FLAGS });
        await c.waitHealthy();
      }
      // the leader clears the job once every member runs the target
      const deadline = Date.now() + 60000;
      let enabled = 'true';
      while (enabled !== 'false' && Date.now() < deadline) {
        const l = await c.leader();
        enabled = (await httpGet(`${c.members[l].peerURL}/downgrade/enabled`)).body;
        if (enabled !== 'false') await sleep(500);
      }
      expect(enabled).to.equal('false');
      const l = await c.leader();
      expect(linesMatching(c.currentLog(l), new RegExp(`"msg":"the cluster has been downgraded".*"cluster-version":"${lowerMinor.replace('.', '\\.')}\\.0"`))).to.not.deep.equal([]);

      const stats = await writer.stop();
      for (let k = 20; k < 30; k++) await c.put(k % 3, `after/${k}`, `v${k}`);
      expect(stats.failed, stats.errors.join('\n')).to.equal(0);
      for (const i of [0, 1, 2]) {
        expect(await getVersion(c.members[i].clientURL), c.members[i].name).to.deep.equal({ etcdserver: to, etcdcluster: `${lowerMinor}.0`, ...(releaseFor(to).storageVersion ? { storage: `${lowerMinor}.0` } : {}) });
        const keys = new Set((await Promise.all(['before/', 'during/', 'after/'].map((p) => c.range(i, p)))).flat().map((kv) => kv.key));
        for (const k of [...stats.keys, ...Array.from({ length: 20 }, (_, n) => `before/${n}`), ...Array.from({ length: 10 }, (_, n) => `after/${n + 20}`)]) {
          expect(keys.has(k), `${c.members[i].name} lost ${k}`).to.equal(true);
        }
      }
    });
  });
}
