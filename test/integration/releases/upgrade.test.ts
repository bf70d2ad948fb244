// The spec's rolling upgrade, end to end against real processes: three 3.3.27 members with data are stopped and
// restarted one at a time as 3.4.34 (same flags plus --logger zap --log-outputs stderr); three 3.4.34 members
// the same way to 3.5.21. After every step: /version on every member, the keys, the log lines on the right members. A client that
// retries writes through the whole upgrade and must never give up on a write; stopping the leader hands
// leadership over (logged) to a member that then leads at a higher term.

import { expect } from 'chai';
import { httpGet, sleep } from '../../../harness/process.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { V33, V34, V35, grpcCall, linesMatching, startWriter, versionsOf, waitClusterVersion, type Writer } from './helpers.js';

const ZAP_FLAGS = ['--logger=zap', '--log-outputs=stderr'];
const DATA_KEYS = 20;
const GRPC_UNAVAILABLE = 14;

/** One phase of the spec's procedure, N-1 -> N, on a fresh cluster of N-1 members started with `baseArgs`. */
function upgradeSuite(from: string, to: string, opts: { baseArgs: string[]; restartArgs: string[]; leaderFirst: boolean }) {
  describe(`releases: rolling upgrade ${from} -> ${to} (real processes)`, function () {
    this.timeout(120000);
    let c: SvcCluster;
    let writer: Writer | undefined;
    /** Members already running the phase's target release. */
    let upgraded = new Set<number>();
    let transfers = 0;

    printLogsOnFailure(() => [c]);

    before(async function () {
      this.timeout(90000);
      c = await startSvcCluster({ size: 3, version: from, extraArgs: opts.baseArgs, timeoutMs: 60000 });
      for (let k = 0; k < DATA_KEYS; k++) await c.put(k % 3, `data/k${String(k).padStart(2, '0')}`, `value-${k}`);
      writer = startWriter(c, 'load/');
    });

    after(async function () {
      this.timeout(60000);
      await writer?.stop();
      await c?.close();
    });

    const expectData = async () => {
      for (const i of c.running()) {
        const kvs = await c.range(i, 'data/');
        expect(kvs.map((kv) => kv.value), `keys read through ${c.members[i].name}`).to.deep.equal(Array.from({ length: DATA_KEYS }, (_, k) => `value-${k}`));
      }
    };

    /** /version of every member: each its own release, the cluster at `cluster`. */
    const expectVersions = async (cluster: string) => {
      const vs = await versionsOf(c);
      expect(vs.size).to.equal(3);
      for (const [i, v] of vs) {
        expect(v, c.members[i].name).to.deep.equal({ etcdserver: c.members[i].version, etcdcluster: cluster });
        // the same facts as metrics (versions in major.minor for the cluster, full for the server)
        const m = (await httpGet(`${c.members[i].clientURL}/metrics`)).body;
        expect(m, c.members[i].name).to.include(`svc_cluster_version{cluster_version="${minor(cluster)}"} 1`);
        expect(m, c.members[i].name).to.include(`svc_server_version{server_version="${c.members[i].version}"} 1`);
      }
    };

    /** Waits until a member other than i logged `pattern` more often than `before[j]` times. */
    const waitMore = async (i: number, pattern: RegExp, before: number[], timeoutMs = 30000) => {
      const deadline = Date.now() + timeoutMs;
      const others = [0, 1, 2].filter((j) => j !== i);
      while (!others.some((j) => linesMatching(c.currentLog(j), pattern).length > before[j])) {
        if (Date.now() > deadline) throw new Error(`no member other than ${c.members[i].name} logged ${pattern} again within ${timeoutMs} ms`);
        await sleep(100);
      }
    };

    /** Stops member i (SIGTERM); when it led, checks the logged transfer and the higher term of the new leader. */
    const stopMember = async (i: number) => {
      const leader = await c.leader();
      const termBefore = Number(((await c.status(leader)).header as { raft_term: string }).raft_term);
      const lost = /lost TCP streaming connection with remote peer|peer became inactive/;
      const lostBefore = [0, 1, 2].map((j) => linesMatching(c.currentLog(j), lost).length);
      const st = await c.stop(i);
      expect(st, `${c.members[i].name} exit status after SIGTERM`).to.deep.equal({ code: 0, signal: null });
      // the others notice the lost peer (expected, temporary)
      await waitMore(i, lost, lostBefore);
      if (leader !== i) return;
      transfers++;
      const lines = c.currentLog(i).split('\n');
      const started = lines.findIndex((l) => /leadership transfer starting/.test(l));
      const finished = lines.findIndex((l) => /leadership transfer finished/.test(l));
      expect(started, 'transfer start logged').to.be.greaterThan(-1);
      expect(finished, 'transfer end logged').to.be.greaterThan(started);
      expect(lines[finished]).to.match(/took[=":]+\d/);
      // the stopping leader steps down to follower before it goes
      expect(lines.slice(started, finished + 1).some((l) => /became follower at term/.test(l)), 'became follower during the transfer').to.equal(true);
      const next = await c.leader();
      expect(next).to.not.equal(i);
      const termAfter = Number(((await c.status(next)).header as { raft_term: string }).raft_term);
      expect(termAfter, 'term of the new leader').to.be.greaterThan(termBefore);
    };

    /** The next member to upgrade: a follower while there is one, the leader last (or first, when asked). */
    const pick = async (leaderFirst: boolean) => {
      const leader = await c.leader();
      const left = [0, 1, 2].filter((i) => !upgraded.has(i));
      if (leaderFirst && left.includes(leader)) return leader;
      return left.find((i) => i !== leader) ?? leader;
    };

    it(`starts with every member at ${from}, cluster version ${minor(from)}.0, every key readable`, async function () {
      await waitClusterVersion(c, `${minor(from)}.0`);
      await expectVersions(`${minor(from)}.0`);
      await expectData();
    });

    {
      const leaderFirst = opts.leaderFirst;
      const fromMinor = from.split('.').slice(0, 2).join('.');
      const toMinor = to.split('.').slice(0, 2).join('.');
      const json = (field: string, value: string) => new RegExp(`"${field}":"${value.replace('.', '\\.')}"`);

      for (let step = 1; step <= 3; step++) {
        const last = step === 3;
        it(`${fromMinor} -> ${toMinor}, member ${step} of 3: restarted as ${to}; cluster version ${last ? `moves to ${toMinor}.0` : `stays ${fromMinor}.0`}`, async function () {
          if (step === 1) upgraded = new Set();
          const i = await pick(leaderFirst && step === 1);
          const activeBefore = [0, 1, 2].map((j) => linesMatching(c.currentLog(j), /peer became active/).length);
          await stopMember(i);
          await c.start(i, { version: to, extraArgs: opts.restartArgs });
          upgraded.add(i);
          await c.waitHealthy(60000);
          // the lost-peer warnings were temporary: the others see the member again
          await waitMore(i, /peer became active/, activeBefore);

          // The restarted member: floor version 3.0 first, then the negotiated one, then it publishes itself.
          const set = await c.waitForLog(i, /"msg":"set initial cluster version"/);
          expect(set).to.match(json('cluster-version', '3.0'));
          await c.waitForLog(i, /"msg":"enabled capabilities for version".*"cluster-version":"3\.0"/);
          await c.waitForLog(i, /"msg":"updated cluster version".*"from":"3\.0"/);
          await c.waitForLog(i, new RegExp(`"msg":"updated cluster version".*"to":"${fromMinor.replace('.', '\\.')}"`));
          await c.waitForLog(i, /"msg":"published local member to cluster through raft"/);

          if (!last) {
            const old = [0, 1, 2].filter((j) => !upgraded.has(j));
            const leader = await c.leader();
            // Old members warn about the newer member (the leader says so too) while the version stays put.
            for (const j of old) {
              await c.waitForLog(j, new RegExp(`the local svc version ${fromMinor.replace('.', '\\.')} is not up-to-date`));
              await c.waitForLog(j, new RegExp(`member [0-9a-f]+ has a higher version ${to.replace(/\./g, '\\.')}`));
              if (j === leader) await c.waitForLog(j, /leader found higher-versioned member/);
            }
            await expectVersions(`${fromMinor}.0`);
            if (to === V35) {
              // a 3.5-only RPC on an upgraded member waits for the cluster version
              const a = await grpcCall(c.members[i].clientURL, 'Auth', 'AuthStatus', {});
              expect(a, JSON.stringify(a)).to.deep.include({ ok: false, code: GRPC_UNAVAILABLE });
              expect(!a.ok && a.details).to.match(/AuthStatus is unavailable until the cluster version is 3\.5/);
              const d = await grpcCall(c.members[i].clientURL, 'Maintenance', 'Downgrade', { action: 'VALIDATE', version: '3.3.0' });
              expect(d, JSON.stringify(d)).to.deep.include({ ok: false, code: GRPC_UNAVAILABLE });
              expect(!d.ok && d.details).to.match(/Downgrade is unavailable until the cluster version is 3\.5/);
            }
          } else {
            await waitClusterVersion(c, `${toMinor}.0`);
            await expectVersions(`${toMinor}.0`);
            for (const j of [0, 1, 2]) {
              await c.waitForLog(j, new RegExp(`"msg":"updated cluster version".*"from":"${fromMinor.replace('.', '\\.')}".*"to":"${toMinor.replace('.', '\\.')}"`));
              await c.waitForLog(j, new RegExp(`"msg":"enabled capabilities for version".*"cluster-version":"${toMinor.replace('.', '\\.')}"`));
              // every member now runs the target: nobody is behind, so nobody warns
              expect(linesMatching(c.currentLog(j), /is not up-to-date|has a higher version/), c.members[j].name).to.deep.equal([]);
            }
            const announcers = [0, 1, 2].filter((j) => linesMatching(c.currentLog(j), new RegExp(`"msg":"cluster version is updated".*"cluster-version":"${toMinor.replace('.', '\\.')}"`)).length > 0);
            expect(announcers, 'members logging "cluster version is updated"').to.have.length(1);
          if (to === V35) {
            for (const j of [0, 1, 2]) {
              const a = await grpcCall(c.members[j].clientURL, 'Auth', 'AuthStatus', {});
              expect(a.ok, JSON.stringify(a)).to.equal(true);
            }
          }
          }
          await expectData();
        });
      }
    }

    it('stopped leaders handed over leadership, and the retrying client lost no write', async function () {
      expect(transfers, 'leaders stopped during the upgrade').to.be.greaterThanOrEqual(1);
      const stats = await writer!.stop();
      writer = undefined;
      expect(stats.errors, 'writes given up on').to.deep.equal([]);
      expect(stats.failed).to.equal(0);
      expect(stats.acked).to.be.greaterThan(0);
      const got = new Set((await c.range(0, 'load/')).map((kv) => kv.key));
      const missing = stats.keys.filter((k) => !got.has(k));
      expect(missing, 'acknowledged writes missing afterwards').to.deep.equal([]);
    });
  });
}

const minor = (v: string) => v.split('.').slice(0, 2).join('.');

// 3.3 -> 3.4: the spec's example adds --logger zap --log-outputs stderr to the restarted members. The leader
// goes first, so a transfer happens between 3.3 members while a 3.4 one is joining.
upgradeSuite(V33, V34, { baseArgs: [], restartArgs: ZAP_FLAGS, leaderFirst: true });
// 3.4 -> 3.5 on a cluster of 3.4 members (running with those flags): followers first, the leader last.
// (Chaining both phases on one cluster hits a server bug: see FAILING.md.)
upgradeSuite(V34, V35, { baseArgs: ZAP_FLAGS, restartArgs: [], leaderFirst: false });
