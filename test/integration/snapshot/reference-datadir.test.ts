// Data dirs of the reference 3.5 (etcd v3.5.21) started by svc: svc converts them once into its own format.
// Side by side: the same data dir (two copies) is started by the reference and by svc, and both must serve the
// same keys (values, create/mod revisions, versions, leases), the same revision, members, leases and users:
// (a) one `etcdutl snapshot restore` made, for one member and for three forming a cluster;
// (b) a cleanly stopped reference member's own (3.5 and 3.4), and one killed with entries in its WAL its db had not
//     applied;
// (c) a corrupt WAL is refused with a clear message and the data dir is left as it was.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { memberArgs } from '../../../harness/member-args.js';
import { freePorts } from '../../../harness/ports.js';
import { spawnLogged, waitFor, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { ETCD_BIN, ref35 } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { useCleanup } from '../../../harness/cleanup.js';
import { useTempDir } from '../../../harness/temp-dir.js';
import { convertReferenceDataDir } from '../../../server/cluster/convert-reference.js';
import { nopLogger } from '../../../server/log/logger.js';
import { appHistory, ctl, keySpace, leaseIds, restoreAndStart, type KeySpace } from './helpers.js';

type Target = 'svc' | 'reference';

interface Placement {
  name: string;
  clientUrl: string;
  peerUrl: string;
  initialCluster: string;
  token: string;
}

/** Checked run of a reference 3.5 tool. */
async function tool(name: 'etcdutl' | 'etcdctl', args: string[], endpoints?: string[]): Promise<string> {
  const r = await etcdctl(args, { bin: ref35(name), endpoints, timeoutMs: 60000 });
  expect(r.code, `${name} ${args.join(' ')}: ${r.stderr}`).to.equal(0);
  return r.stdout;
}

async function placement(name: string, token: string): Promise<Placement> {
  const [c, p] = await freePorts(2);
  const peerUrl = `http://127.0.0.1:${p}`;
  return { name, clientUrl: `http://127.0.0.1:${c}`, peerUrl, initialCluster: `${name}=${peerUrl}`, token };
}

interface Release {
  /** The reference's etcd binary. */
  etcd: string;
  /** SVC_VERSION for svc ('' = the newest, 3.5). */
  svc: string;
}

const R35 = (): Release => ({ etcd: ref35('etcd'), svc: '' });

/** Starts `target` on `dataDir` with the member's flags and waits for /health. */
async function startOn(target: Target, dataDir: string, pl: Placement, logFile: string, extra: string[] = [], release = R35()): Promise<LoggedProcess> {
  const args = [...memberArgs({ name: pl.name, dataDir, clientUrl: pl.clientUrl, peerUrl: pl.peerUrl, initialCluster: pl.initialCluster, token: pl.token, state: 'new' }), ...extra];
  const proc = target === 'svc' ? spawnSvc(args, { logFile, name: `svc-${pl.name}`, version: release.svc }) : spawnLogged(release.etcd, args, { logFile, name: `ref-${pl.name}` });
  try {
    await waitForHttp(`${pl.clientUrl}/health`, { timeoutMs: 30000, process: proc });
  } catch (e) {
    await proc.stop('SIGKILL', 5000);
    throw e;
  }
  return proc;
}

interface ServedState {
  space: KeySpace;
  members: string;
  leases: string[];
  users: string;
  roles: string;
}

/** What a member serves: every key, the members (once every one has published its name), leases, users, roles. */
async function served(endpoint: string): Promise<ServedState> {
  const members = await waitFor('every member published', async () => {
    const out = await ctl(['member', 'list'], [endpoint]);
    // started: named, and its client URLs published
    return out.includes('unstarted') || /, , (true|false)$/m.test(out) ? undefined : out.split('\n').filter(Boolean).sort().join('\n');
  }, 20000);
  return { space: await keySpace(endpoint), members, leases: await leaseIds(endpoint), users: await ctl(['user', 'list'], [endpoint]), roles: await ctl(['role', 'list'], [endpoint]) };
}

/** The state the reference serves from a copy of `dataDir`, then the state svc serves from `dataDir` itself. */
async function sideBySide(dataDir: string, pl: Placement, logDir: string, release = R35()): Promise<{ ref: ServedState; svc: ServedState; svcProc: LoggedProcess }> {
  const copy = `${dataDir}.ref-copy`;
  cpSync(dataDir, copy, { recursive: true });
  const refProc = await startOn('reference', copy, pl, join(logDir, `${pl.name}-ref.log`), [], release);
  let ref: ServedState;
  try {
    ref = await served(hostPort(pl.clientUrl));
  } finally {
    await refProc.stop('SIGTERM', 10000);
  }
  const svcProc = await startOn('svc', dataDir, pl, join(logDir, `${pl.name}-svc.log`), [], release);
  return { ref, svc: await served(hostPort(pl.clientUrl)), svcProc };
}

const hostPort = (url: string) => url.replace(/^http:\/\//, '');

/** Every file under `dir` with its sha256. */
function fileHashes(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(dir);
  return out;
}

function expectConverted(proc: LoggedProcess, dataDir: string): void {
  expect(proc.log()).to.match(/converted a data dir of the reference \(etcd\) into svc's format/);
  expect(existsSync(join(dataDir, 'member.reference', 'wal')), 'the original kept aside').to.equal(true);
}

describe('reference data dirs (3.5, 3.4) started by svc (converted once)', function () {
  this.timeout(240000);
  const stopLater = useCleanup({ closeAfter: 'each' });
  const tmp = useTempDir('svc-ref-datadir-');
  let snapshot: string;
  let history: KeySpace;

  before(async function () {
    this.timeout(120000);
    // a reference 3.5 member's history: keys rewritten and deleted, a compaction, a lease, a user and a role
    const pl = await placement('src', 'src-token');
    const dir = join(tmp.path, 'src.data');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const proc = await startOn('reference', dir, pl, join(tmp.path, 'src.log'));
    try {
      await appHistory([hostPort(pl.clientUrl)], { keys: 20, blobSeed: 5, rewrites: 6, deleted: '1', back: 3 });
      history = await keySpace(hostPort(pl.clientUrl));
      snapshot = join(tmp.path, 'src.snapshot');
      await tool('etcdctl', ['snapshot', 'save', snapshot], [hostPort(pl.clientUrl)]);
    } finally {
      await proc.stop('SIGKILL', 5000);
    }
  });

  it('etcdutl snapshot restore -> svc: the same keys, revision, members, leases and users as the reference serves from it', async () => {
    const pl = await placement('m1', 'restored-token');
    const dataDir = join(tmp.path, 'restored-1');
    await tool('etcdutl', ['snapshot', 'restore', snapshot, `--data-dir=${dataDir}`, `--name=${pl.name}`, `--initial-cluster=${pl.initialCluster}`, `--initial-advertise-peer-urls=${pl.peerUrl}`, `--initial-cluster-token=${pl.token}`]);
    const originals = fileHashes(join(dataDir, 'member'));
    const { ref, svc, svcProc } = await sideBySide(dataDir, pl, tmp.path);
    stopLater({ stop: () => svcProc.stop('SIGKILL', 5000) });
    expectConverted(svcProc, dataDir);
    expect(svc).to.deep.equal(ref);
    expect(svc.space).to.deep.equal(history);
    expect(svc.users).to.equal('bob\n');
    // nothing of the reference's files was changed: they are all kept aside
    expect(fileHashes(join(dataDir, 'member.reference'))).to.deep.equal(originals);
    // it goes on from the restored revision, and a restart does not convert again
    await ctl(['put', 'after', 'conversion'], [hostPort(pl.clientUrl)]);
    await svcProc.stop('SIGTERM', 10000);
    const again = await startOn('svc', dataDir, pl, join(tmp.path, 'm1-svc-again.log'));
    stopLater({ stop: () => again.stop('SIGKILL', 5000) });
    expect(again.log()).not.to.match(/converted a data dir/);
    const after = await keySpace(hostPort(pl.clientUrl));
    expect(after.revision).to.equal(history.revision + 1);
    expect(after.keys.size).to.equal(history.keys.size + 1);
  });

  it('a conversion interrupted between its renames is finished at the next start', async () => {
    const pl = await placement('m2', 'crash-token');
    const dataDir = join(tmp.path, 'restored-2');
    await tool('etcdutl', ['snapshot', 'restore', snapshot, `--data-dir=${dataDir}`, `--name=${pl.name}`, `--initial-cluster=${pl.initialCluster}`, `--initial-advertise-peer-urls=${pl.peerUrl}`, `--initial-cluster-token=${pl.token}`]);
    await convertReferenceDataDir(nopLogger, dataDir);
    // the state a crash leaves after the original was moved aside, before the converted dir took its place
    renameSync(join(dataDir, 'member'), join(dataDir, 'member.converted'));
    const proc = await startOn('svc', dataDir, pl, join(tmp.path, 'm2-svc.log'));
    stopLater({ stop: () => proc.stop('SIGKILL', 5000) });
    expect(proc.log()).to.match(/finished an interrupted conversion of a reference data dir/);
    expect(await keySpace(hostPort(pl.clientUrl))).to.deep.equal(history);
  });

  it('three data dirs from etcdutl snapshot restore -> three svc members form the cluster and serve it all', async () => {
    const cluster = stopLater(
      await restoreAndStart(snapshot, join(tmp.path, 'three'), 3, 'm3-', async (args) => void (await tool('etcdutl', args)), (name, flags, logFile) => spawnSvc(flags, { logFile, name })),
    );
    for (const p of cluster.processes) expect(p.log()).to.match(/converted a data dir of the reference/);
    for (const e of cluster.endpoints) expect(await keySpace(e)).to.deep.equal(history);
    const members = (await served(cluster.endpoints[0])).members.split('\n');
    expect(members).to.have.length(3);
    for (const m of members) expect(m).to.match(/, started, m3-\d, /);
    await ctl(['put', 'after', 'x'], cluster.endpoints);
    for (const e of cluster.endpoints) {
      await waitFor('the write replicated', async () => ((await keySpace(e)).revision === history.revision + 1 ? true : undefined), 10000);
    }
  });

  it('a cleanly stopped reference member\'s data dir, and one killed before its db applied its WAL: svc serves what the reference does', async () => {
    const pl = await placement('own', 'own-token');
    const dataDir = join(tmp.path, 'own.data');
    mkdirSync(dataDir, { mode: 0o700 });
    const ep = [hostPort(pl.clientUrl)];
    let proc = await startOn('reference', dataDir, pl, join(tmp.path, 'own-1.log'));
    await appHistory(ep, { keys: 10, blobSeed: 7, rewrites: 3, deleted: '2', back: 2 });
    // while the reference runs on it, svc refuses to touch it
    const other = await placement('own', 'own-token');
    const busyArgs = memberArgs({ name: 'own', dataDir, clientUrl: other.clientUrl, peerUrl: other.peerUrl, initialCluster: other.initialCluster, token: 'own-token', state: 'new' });
    const busy = spawnSvc(busyArgs, { logFile: join(tmp.path, 'own-busy.log'), name: 'svc-busy' });
    expect((await busy.exited).code).to.equal(1);
    expect(busy.log()).to.match(new RegExp(`the reference's data dir .* is in use by process ${proc.pid} \\(a running etcd\\?\\): stop it before starting svc`));
    expect(existsSync(join(dataDir, 'member.reference'))).to.equal(false);
    await proc.stop('SIGTERM', 10000);
    const stopped = `${dataDir}.stopped`;
    cpSync(dataDir, stopped, { recursive: true });

    // (b) the cleanly stopped member
    const clean = await sideBySide(stopped, pl, tmp.path);
    await clean.svcProc.stop('SIGTERM', 10000);
    expectConverted(clean.svcProc, stopped);
    expect(clean.svc).to.deep.equal(clean.ref);
    expect(clean.svcProc.log()).to.match(/"wal-entries-to-apply":0/);

    // (b2) its db commits only every hour: what it applies after the restart is only in its WAL when it is killed
    proc = await startOn('reference', dataDir, pl, join(tmp.path, 'own-2.log'), ['--backend-batch-interval=1h', '--backend-batch-limit=1000000']);
    const lease = (await ctl(['lease', 'grant', '600'], ep)).split(' ')[1];
    await ctl(['put', 'late/leased', 'v', `--lease=${lease}`], ep);
    await ctl(['put', 'late/a', '1'], ep);
    await ctl(['put', 'app/3', 'rewritten-late'], ep);
    await ctl(['del', 'app/4'], ep);
    const txn = await etcdctl(['txn'], { endpoints: ep, input: 'value("late/a") = "1"\n\nput late/txn yes\ndel late/a\n\n\n' });
    expect(txn.stdout, txn.stderr).to.match(/^SUCCESS/);
    await ctl(['put', 'late/b', '2'], ep);
    const live = await keySpace(ep[0]);
    await proc.stop('SIGKILL', 5000);
    const killed = await sideBySide(dataDir, pl, tmp.path);
    stopLater({ stop: () => killed.svcProc.stop('SIGKILL', 5000) });
    expectConverted(killed.svcProc, dataDir);
    expect(killed.svcProc.log()).to.match(/"wal-entries-to-apply":[1-9]/);
    expect(killed.svc).to.deep.equal(killed.ref);
    expect(killed.svc.space).to.deep.equal(live);
    expect(killed.svc.leases).to.include(lease);
  });

  it('a cleanly stopped reference 3.4 member\'s data dir: svc 3.4 serves what the reference 3.4 does', async () => {
    const r34: Release = { etcd: ETCD_BIN, svc: '3.4.34' };
    const pl = await placement('old', 'old-token');
    const dataDir = join(tmp.path, 'old.data');
    mkdirSync(dataDir, { mode: 0o700 });
    const proc = await startOn('reference', dataDir, pl, join(tmp.path, 'old-1.log'), [], r34);
    await appHistory([hostPort(pl.clientUrl)], { keys: 8, blobSeed: 11, rewrites: 2, deleted: '3', back: 2 });
    await proc.stop('SIGTERM', 10000);
    const r = await sideBySide(dataDir, pl, tmp.path, r34);
    stopLater({ stop: () => r.svcProc.stop('SIGKILL', 5000) });
    expectConverted(r.svcProc, dataDir);
    expect(r.svc).to.deep.equal(r.ref);
  });

  it('a corrupt reference WAL is refused with a clear message, and the data dir is left as it was', async () => {
    const pl = await placement('bad', 'bad-token');
    const dataDir = join(tmp.path, 'bad.data');
    mkdirSync(dataDir, { mode: 0o700 });
    const proc = await startOn('reference', dataDir, pl, join(tmp.path, 'bad-1.log'));
    await ctl(['put', 'corrupt-me-please', 'x'], [hostPort(pl.clientUrl)]);
    await ctl(['put', 'after', 'y'], [hostPort(pl.clientUrl)]);
    await proc.stop('SIGTERM', 10000);
    // one flipped byte inside an entry's data, in the middle of the log
    const walDir = join(dataDir, 'member', 'wal');
    const seg = join(walDir, readdirSync(walDir).filter((n) => n.endsWith('.wal')).sort()[0]);
    const buf = readFileSync(seg);
    const at = buf.indexOf('corrupt-me-please');
    expect(at).to.be.greaterThan(0);
    buf[at + 3] ^= 0x20;
    writeFileSync(seg, buf);
    const hashes = fileHashes(dataDir);

    const run = async (target: Target, dir: string) => {
      const args = memberArgs({ name: pl.name, dataDir: dir, clientUrl: pl.clientUrl, peerUrl: pl.peerUrl, initialCluster: pl.initialCluster, token: pl.token, state: 'new' });
      const logFile = join(tmp.path, `bad-${target}.log`);
      const p = target === 'svc' ? spawnSvc(args, { logFile, name: 'svc-bad' }) : spawnLogged(ref35('etcd'), args, { logFile, name: 'ref-bad' });
      const status = await Promise.race([p.exited, new Promise<undefined>((r) => setTimeout(r, 20000))]);
      if (!status) await p.stop('SIGKILL', 5000);
      return { status, log: p.log() };
    };
    const copy = `${dataDir}.ref-copy`;
    cpSync(dataDir, copy, { recursive: true });
    const ref = await run('reference', copy);
    expect(ref.status?.code, 'the reference refuses it too').to.not.equal(0);
    expect(ref.log).to.match(/crc mismatch/);

    const svc = await run('svc', dataDir);
    expect(svc.status?.code).to.equal(1);
    expect(svc.log).to.match(/cannot convert the reference's data dir .*: its WAL is corrupt: crc mismatch in .*\.wal at offset \d+/);
    expect(svc.log).to.match(/Nothing was changed in .*\/member\. Restore the member from a snapshot/);
    expect(fileHashes(dataDir)).to.deep.equal(hashes);
  });
});
