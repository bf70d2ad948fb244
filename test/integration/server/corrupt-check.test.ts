// Corruption checks (--experimental-initial-corrupt-check, --experimental-corrupt-check-time) with a member whose
// database was altered behind its back (stopped, one stored value rewritten with the storage layer's own API, so the
// file opens but the KV hash differs): a healthy restart passes the initial check and serves; the altered member
// refuses to start (exit status 1, the reference's lines); started without the initial check, the leader's periodic
// check raises CORRUPT (member 0), which the reference 3.5 etcdctl's `alarm list`, /metrics and writes show. Side by
// side, the reference 3.5.21 logs the same lines for the same flags, answers /members/hashkv the same way, and
// refuses a member whose db holds other values at the same revision with the same lines and exit status.
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { alterStoredValue } from '../../../harness/alter-kv.js';
import { etcdctl, ref35, startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { httpGet, sleep, spawnLogged } from '../../../harness/process.js';
import { peerRequest } from '../../../server/cluster/peer-http.js';

/** GET <peer URL>/members/hashkv with a HashKVRequest body, as a peer's corruption check sends it. */
async function peerHashKV(peerURL: string, revision: number, clusterId?: string): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(clusterId ? { 'X-Etcd-Cluster-ID': clusterId } : {}) };
  const r = await peerRequest(`${peerURL}/members/hashkv`, { method: 'GET', body: JSON.stringify({ revision }), timeoutMs: 5000, headers });
  return { status: r.status, body: r.body };
}

const FLAGS = ['--experimental-initial-corrupt-check=true', '--experimental-corrupt-check-time=1s'];
type Line = Record<string, unknown> & { msg: string };

/** The JSON log lines of a log text that have message `msg`. */
function lines(text: string, msg: string): Line[] {
  return text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line).filter((l) => l.msg === msg);
}

describe('corruption checks with an altered member (svc 3.5, side by side with the reference 3.5.21)', function () {
  this.timeout(120000);
  let svc: SvcCluster | undefined;
  let ref: ReferenceCluster | undefined;
  let other: ReferenceCluster | undefined;
  printLogsOnFailure(() => [svc]);
  after(async () => {
    await Promise.all([svc?.close(), ref?.stop(), other?.stop()]);
  });

  it('a healthy restart passes and serves; the altered member refuses to start; the periodic check raises CORRUPT', async () => {
    [svc, ref, other] = await Promise.all([
      startSvcCluster({ size: 3, version: '3.5.21', extraArgs: FLAGS }),
      startReferenceCluster({ size: 3, binary: ref35('etcd'), extraArgs: FLAGS }),
      startReferenceCluster({ size: 1, binary: ref35('etcd') }),
    ]);
    const c = svc;
    const refctl = { bin: ref35('etcdctl') };
    for (const k of ['k1', 'k2', 'k3']) {
      await c.put(0, k, `v-${k}`);
      await ref.etcdctl(['put', k, `v-${k}`], refctl);
      await other.etcdctl(['put', k, 'elsewhere'], refctl); // the same revisions, other values
    }

    // the reference: restart one member with the same flags; it logs the initial check's lines
    const r0 = ref.members[0];
    const refArgs = r0.process.child.spawnargs.slice(1);
    await r0.process.stop();
    r0.process = spawnLogged(ref35('etcd'), refArgs, { logFile: r0.logFile, name: r0.name });
    await r0.process.waitForLog('initial corruption checking passed; no corruption', 20000);

    // svc: a member restarted with its data intact passes and serves
    await c.stop(1);
    await c.start(1);
    const passed = lines(c.currentLog(1), 'initial corruption checking passed; no corruption');
    expect(passed.length).to.equal(1);
    expect(await c.put(1, 'after', 'restart')).to.be.a('number');
    const leader = await c.leader();
    await c.waitForLog(leader, /"finished peer corruption check"/, 5000);

    // side by side: the same lines with the same fields (and the same timeout and interval)
    const refLog = r0.process.log();
    for (const msg of ['starting initial corruption check', 'initial corruption checking passed; no corruption', 'enabled corruption checking']) {
      const [s, r] = [lines(c.currentLog(1), msg)[0], lines(refLog, msg)[0]];
      expect(s, `svc: ${msg}`).to.not.equal(undefined);
      expect(r, `reference: ${msg}`).to.not.equal(undefined);
      const keys = (l: Line) => Object.keys(l).filter((k) => !['level', 'ts', 'caller', 'logger', 'pkg'].includes(k)).sort();
      expect(keys(s), msg).to.deep.equal(keys(r));
      for (const k of ['timeout', 'interval']) expect(s[k], `${msg}: ${k}`).to.equal(r[k]);
    }
    // the leaders' passes: once every member is back, both check their two peers
    const checked = (text: string) => lines(text, 'finished peer corruption check').map((l) => l['number-of-peers-checked']);
    let both: unknown[][] = [];
    for (const deadline = Date.now() + 8000; Date.now() < deadline; await sleep(250)) {
      both = [checked(c.currentLog(leader)), checked(ref.members.map((m) => m.process.log()).join('\n'))];
      if (both.every((xs) => xs.includes(2))) break;
    }
    for (const xs of both) expect(xs).to.include(2);
    expect((await etcdctl(['alarm', 'list'], { bin: ref35('etcdctl'), endpoints: [c.members[0].endpoint] })).stdout).to.equal('');

    // the peer endpoint answers as the reference's: the hash at a revision, the mvcc error, another cluster refused
    for (const [url, rev] of [[c.members[0].peerURL, Number((await c.status(0)).header && ((await c.status(0)).header as { revision: string }).revision)], [ref.members[1].peerUrl, 1]] as const) {
      const ok = await peerHashKV(url, rev);
      expect(ok.status, url).to.equal(200);
      const j = JSON.parse(ok.body) as Record<string, unknown>;
      expect(Object.keys(j).sort(), url).to.deep.equal(['compact_revision', 'hash', 'header']);
      expect(Object.keys(j.header as object), url).to.deep.equal(['revision']);
      expect(j.compact_revision, url).to.equal(-1);
      expect(await peerHashKV(url, 1000), url).to.deep.equal({ status: 400, body: 'mvcc: required revision is a future revision\n' });
      expect(await peerHashKV(url, 1, 'ffff'), url).to.deep.equal({ status: 412, body: 'cluster ID mismatch\n' });
    }

    // the altered member refuses to start: status 1, the reference's lines
    await c.stop(2);
    alterStoredValue(c.members[2].dataDir, 'k1', 'altered');
    await c.start(2, { waitHealthy: false });
    const exit = await c.members[2].process.exited;
    expect(exit.code).to.equal(1);
    const log = c.currentLog(2);
    expect(lines(log, 'found different hash values from remote peer').length).to.equal(2);
    const failed = lines(log, 'checkInitialHashKV failed');
    expect(failed.length).to.equal(1);
    expect(failed[0].error).to.match(/^[0-9a-f]+ found data inconsistency with peers$/);
    expect(log).to.not.contain('initial corruption checking passed');
    c.members[2].crashes.length = 0; // the exit was the point

    // the reference refuses the same way: its member 2 gets a db of the same revision with other values (restored
    // from the other cluster's snapshot under its own name and token, so its ids stay)
    const snap = join(other.dir, 'other.db');
    expect((await other.etcdctl(['snapshot', 'save', snap], refctl)).code).to.equal(0);
    const r2 = ref.members[2];
    const r2Args = r2.process.child.spawnargs.slice(1);
    const flag = (n: string) => r2Args.find((x) => x.startsWith(`--${n}=`))!.slice(n.length + 3);
    const restore = ['snapshot', 'restore', snap, `--name=${r2.name}`, `--initial-cluster=${flag('initial-cluster')}`, `--initial-cluster-token=${flag('initial-cluster-token')}`, `--initial-advertise-peer-urls=${r2.peerUrl}`, `--data-dir=${r2.dataDir}`];
    // (once in a CI run on a loaded machine the reference's start ended with exit 2 instead of its refusal; such a start
    // is tried again on a fresh restore, and the ends of the attempts' logs go in the message if none refuses)
    let refusedCode: number | null = null;
    const tails: string[] = [];
    for (let attempt = 1; attempt <= 3 && refusedCode !== 1; attempt++) {
      await r2.process.stop();
      rmSync(r2.dataDir, { recursive: true, force: true });
      expect((await etcdctl(restore, { bin: ref35('etcdutl') })).code).to.equal(0);
      r2.process = spawnLogged(ref35('etcd'), r2Args, { logFile: `${r2.logFile}.altered-${attempt}`, name: r2.name });
      refusedCode = (await r2.process.exited).code;
      if (refusedCode !== 1) tails.push(`attempt ${attempt}, exit ${refusedCode}: ${r2.process.log().split('\n').slice(-8).join('\n')}`);
    }
    expect(refusedCode, tails.join('\n')).to.equal(1);
    const refusal = (text: string) =>
      text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line)
        .filter((l) => /corrupt|hash|inconsisten|discovery/i.test(`${l.msg} ${String(l.error ?? '')}`))
        .map((l) => [l.level, l.msg, String(l.error ?? '').replace(/^[0-9a-f]+ /, '<id> ')]);
    expect(refusal(log)).to.deep.equal(refusal(r2.process.log()));

    // started without the initial check, it joins; the leader's next pass raises CORRUPT for member 0
    await c.start(2, { waitHealthy: false, extraArgs: ['--experimental-initial-corrupt-check=false'] });
    let listed = '';
    for (const deadline = Date.now() + 15000; Date.now() < deadline && !listed.includes('CORRUPT'); await sleep(300)) {
      listed = (await etcdctl(['alarm', 'list'], { bin: ref35('etcdctl'), endpoints: [c.members[0].endpoint] })).stdout;
    }
    // (the reference etcdctl prints the alarm's proto text, which leaves out a zero member ID)
    expect(listed).to.equal('alarm:CORRUPT \n');
    const metrics = (await httpGet(`${c.members[1].clientURL}/metrics`)).body;
    expect(metrics).to.match(/^svc_server_alarms\{alarm_type="CORRUPT"\} 1$/m);
    expect(metrics).to.match(/^svc_server_alarms\{alarm_type="NOSPACE"\} 0$/m);
    const put = await etcdctl(['put', 'k4', 'v'], { bin: ref35('etcdctl'), endpoints: [c.members[0].endpoint] });
    expect(put.code).to.not.equal(0);
    expect(put.stderr).to.contain('etcdserver: corrupt cluster');
    // reads are still served, as the reference serves them beside its refusing applier
    expect((await etcdctl(['get', 'k2', '--print-value-only'], { bin: ref35('etcdctl'), endpoints: [c.members[0].endpoint] })).stdout).to.equal('v-k2\n');
  });
});

describe('the compaction hash check with an altered follower (svc 3.5)', function () {
  this.timeout(90000);
  let svc: SvcCluster | undefined;
  printLogsOnFailure(() => [svc]);
  after(async () => {
    await svc?.close();
  });

  it('each member hashes at the compaction; the leader finds the follower outside the majority and raises CORRUPT for it alone', async () => {
    svc = await startSvcCluster({ size: 3, version: '3.5.21', extraArgs: ['--experimental-compact-hash-check-enabled', '--experimental-compact-hash-check-time=300ms'] });
    const c = svc;
    for (const k of ['k1', 'k2', 'k3']) await c.put(0, k, `v-${k}`);
    const leader = await c.leader();
    const altered = [0, 1, 2].find((i) => i !== leader)!;
    const alteredId = await c.memberId(altered);
    await c.stop(altered);
    alterStoredValue(c.members[altered].dataDir, 'k1', 'altered');
    await c.start(altered);
    const rev = await c.put(leader, 'k4', 'v');
    expect((await etcdctl(['compaction', '--physical', String(rev)], { bin: ref35('etcdctl'), endpoints: [c.members[leader].endpoint] })).code).to.equal(0);
    let listed = '';
    for (const deadline = Date.now() + 15000; Date.now() < deadline && !listed.includes('CORRUPT'); await sleep(300)) {
      listed = (await etcdctl(['alarm', 'list'], { bin: ref35('etcdctl'), endpoints: [c.members[leader].endpoint] })).stdout;
    }
    // the alarm names the altered member (a majority agreed on the other hash), not member 0
    expect(listed).to.equal(`memberID:${alteredId} alarm:CORRUPT \n`);
    // (logged again at each pass while the alarm stands, as the reference does: nothing marks a mismatch checked)
    const found = lines(c.currentLog(leader), 'Detected compaction hash mismatch');
    expect(found.length).to.be.greaterThan(0);
    expect(found[0]).to.include({ 'leader-revision': rev, 'quorum-exist': true });
    expect(found[0]['peer-ids']).to.deep.equal([BigInt(alteredId).toString(16)]);
  });
});
