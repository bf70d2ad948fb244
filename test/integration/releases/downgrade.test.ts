// Downgrades and refused upgrades, against real processes on one 3-member cluster that starts at 3.3.27:
// 3.3 -> 3.5 refused; a member upgraded to 3.4 goes back to 3.3 while the others still run 3.3 (allowed);
// after every member runs 3.4 (cluster version 3.4) a 3.3 member refuses to start while the others keep
// serving; with authentication on, a 3.5 member refuses to join the 3.4 cluster and the same member then
// restarts fine on 3.4 (nothing corrupted).

import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { httpGet, sleep } from '../../../harness/process.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { V33, V34, V35, expectExit, getVersion, linesMatching, versionsOf, waitClusterVersion } from './helpers.js';

const ZAP_FLAGS = ['--logger=zap', '--log-outputs=stderr'];

/** Path -> sha256 of every file under dir (lock files excepted). */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!/lock/i.test(e.name)) out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

describe('releases: downgrade and refused upgrades (real processes)', function () {
  this.timeout(120000);
  let c: SvcCluster;

  printLogsOnFailure(() => [c]);

  before(async function () {
    this.timeout(90000);
    c = await startSvcCluster({ size: 3, version: V33, timeoutMs: 60000 });
    await c.put(0, 'data/a', 'alpha');
    await waitClusterVersion(c, '3.3.0');
  });

  after(async function () {
    this.timeout(60000);
    await c?.close();
  });

  /** A member that is not the leader (so stopping it moves nothing). */
  const follower = async () => {
    const leader = await c.leader();
    return [0, 1, 2].find((i) => i !== leader)!;
  };

  /** Every running member answers /version with its own release and the given cluster version. */
  const expectVersions = async (cluster: string) => {
    for (const [i, v] of await versionsOf(c)) expect(v, c.members[i].name).to.deep.equal({ etcdserver: c.members[i].version, etcdcluster: cluster });
  };

  /** Starts member i as `version` and expects it to refuse: non-zero exit and `message` in its log. */
  const expectRefusal = async (i: number, version: string, message: RegExp, extraArgs: string[] = []) => {
    await c.start(i, { version, extraArgs, waitHealthy: false });
    const st = await expectExit(c.members[i].process, 40000);
    expect(st.code, `${c.members[i].name} (${version}) exit code`).to.be.a('number').and.not.equal(0);
    expect(linesMatching(c.currentLog(i), message), `${c.members[i].name} log`).to.not.deep.equal([]);
  };

  /** The members other than i still serve: health, a write and a linearizable read. */
  const othersServe = async (i: number, key: string) => {
    const others = [0, 1, 2].filter((j) => j !== i);
    for (const j of others) expect((await httpGet(`${c.members[j].clientURL}/health`)).status, c.members[j].name).to.equal(200);
    await c.put(others[0], key, 'written-while-refused');
    expect(await c.get(others[1], key)).to.equal('written-while-refused');
  };

  it('3.3 -> 3.5 is refused (upgrade through 3.4 first); the member restarts fine on 3.3', async function () {
    const i = await follower();
    await c.stop(i);
    await expectRefusal(i, V35, /unsupported upgrade; .*upgrade through 3\.4 first/);
    await othersServe(i, 'data/while-3.5-refused');
    await c.start(i, { version: V33 });
    await c.waitHealthy();
    expect(await getVersion(c.members[i].clientURL)).to.deep.equal({ etcdserver: V33, etcdcluster: '3.3.0' });
    expect(await c.get(i, 'data/while-3.5-refused')).to.equal('written-while-refused');
    expect(await c.get(i, 'data/a')).to.equal('alpha');
  });

  it('downgrade while mixed: a member upgraded to 3.4 goes back to 3.3 while the others still run 3.3', async function () {
    const i = await follower();
    await c.stop(i);
    await c.start(i, { version: V34, extraArgs: ZAP_FLAGS });
    await c.waitForLog(i, /"msg":"updated cluster version".*"to":"3\.3"/);
    await c.put(i, 'data/b', 'written-by-3.4');
    await expectVersions('3.3.0');

    await c.stop(i);
    await c.start(i, { version: V33 });
    await c.waitHealthy();
    expect(linesMatching(c.currentLog(i), /invalid downgrade|unsupported upgrade/)).to.deep.equal([]);
    await expectVersions('3.3.0');
    expect(await c.get(i, 'data/b')).to.equal('written-by-3.4');
    await c.put(i, 'data/c', 'written-after-downgrade');
    for (const j of [0, 1, 2]) expect(await c.get(j, 'data/c'), c.members[j].name).to.equal('written-after-downgrade');
    // a few version-decision rounds later the cluster is still at 3.3 and healthy
    await sleep(9000);
    await c.waitHealthy();
    await expectVersions('3.3.0');
  });

  it('after completion (every member 3.4, cluster version 3.4.0) a 3.3 member refuses to start; the rest keep serving', async function () {
    for (const i of [0, 1, 2]) {
      await c.stop(i);
      await c.start(i, { version: V34, extraArgs: ZAP_FLAGS });
      await c.waitHealthy();
    }
    await waitClusterVersion(c, '3.4.0');
    const i = await follower();
    await c.stop(i);
    await expectRefusal(i, V33, /invalid downgrade; server version is lower than determined cluster version/);
    await othersServe(i, 'data/while-3.3-refused');
    expect((await versionsOf(c)).size).to.equal(2);
    await expectVersions('3.4.0');
    // the way forward again: the same data dir on 3.4
    await c.start(i, { version: V34, extraArgs: ZAP_FLAGS });
    await c.waitHealthy();
    await expectVersions('3.4.0');
    expect(await c.get(i, 'data/while-3.3-refused')).to.equal('written-while-refused');
  });

  it('with authentication enabled, 3.4 -> 3.5 is refused and the member restarts fine on 3.4', async function () {
    const endpoints = c.running().map((j) => c.members[j].endpoint);
    const add = await etcdctl(['user', 'add', 'root', '--new-user-password=rootpw', '--interactive=false'], { endpoints });
    expect(add.code, add.stderr).to.equal(0);
    const enable = await etcdctl(['auth', 'enable'], { endpoints });
    expect(enable.code, enable.stderr).to.equal(0);
    const put = await etcdctl(['--user=root:rootpw', 'put', 'data/secret', 's3cret'], { endpoints });
    expect(put.code, put.stderr).to.equal(0);

    const i = await follower();
    await c.stop(i);
    const before = fingerprint(c.members[i].dataDir);
    await expectRefusal(i, V35, /rolling upgrade to 3\.5 is not supported while authentication is enabled/, ZAP_FLAGS);
    // refused before writing anything: the data dir is byte for byte what 3.4 left
    expect(fingerprint(c.members[i].dataDir)).to.deep.equal(before);

    await c.start(i, { version: V34, extraArgs: ZAP_FLAGS });
    await c.waitHealthy();
    expect(await getVersion(c.members[i].clientURL)).to.deep.equal({ etcdserver: V34, etcdcluster: '3.4.0' });
    const get = await etcdctl(['--user=root:rootpw', 'get', 'data/secret', '--print-value-only'], { endpoints: [c.members[i].endpoint] });
    expect(get.code, get.stderr).to.equal(0);
    expect(get.stdout.trim()).to.equal('s3cret');
    const status = await etcdctl(['--user=root:rootpw', 'endpoint', 'health'], { endpoints: [c.members[i].endpoint] });
    expect(status.code, status.stderr).to.equal(0);
  });
});
