// TLS and token flags the reference 3.5 accepts, side by side with it where one member is enough:
// --tls-min-version / --tls-max-version (a client outside the range fails the handshake),
// --client-cert-allowed-hostname (a client certificate naming no allowed SAN is refused), --auth-token-ttl
// (a simple token lives that long after its last use). Then svc alone with two members:
// --peer-client-cert-file (the certificate a member presents when it dials its peers) with
// --peer-cert-allowed-hostname (the peer port takes only certificates naming that SAN).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { etcdctl } from '../../../harness/etcdctl.js';
import { parseServerConfig } from '../../../server/config/flags.js';
import { releaseFor } from '../../../server/releases.js';
import { memberArgs } from '../../../harness/member-args.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, sleep, spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSingleMember, startSideBySide, TARGETS, type Target } from '../../../harness/side-by-side.js';
import { runSvc, spawnSvc } from '../../../harness/svc-cluster.js';
import { makeLeafCert, makeTestPki, type TestPki } from '../../../harness/tls.js';
import { useProcessDir } from '../../../harness/temp-dir.js';

describe('TLS version, allowed hostname and token TTL flags (side by side with the reference 3.5)', function () {
  this.timeout(120000);
  let dir: string;
  let pki: TestPki;
  let named: { cert: Buffer; key: Buffer };
  const procs: LoggedProcess[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-tlsflags-'));
    pki = makeTestPki(dir);
    const f = makeLeafCert(pki, 'named', 'named client', { extKeyUsage: ['clientAuth', 'serverAuth'], hosts: ['svc-peer.example'] });
    named = { cert: readFileSync(f.cert), key: readFileSync(f.key) };
  });
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  /** svc and the reference, one member each, https client URL with these extra flags; their URLs once healthy. */
  async function startBoth(tag: string, flags: string[]): Promise<Record<Target, string>> {
    const tlsFlags = [`--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`];
    const m = await startSideBySide({ dir, tag, procs, scheme: 'https', flags: [...tlsFlags, ...flags], wait: { ca: pki.ca, ...named } });
    return { svc: m.svc.clientUrl, reference: m.reference.clientUrl };
  }

  /** 'ok <status>' or 'refused' for a GET /health with this client TLS. */
  async function get(url: string, o: { cert?: Buffer; key?: Buffer; minVersion?: SecureVersion; maxVersion?: SecureVersion }): Promise<string> {
    try {
      return `ok ${(await httpGet(`${url}/health`, { ca: pki.ca, cert: o.cert ?? pki.clientCert, key: o.key ?? pki.clientKey, minVersion: o.minVersion, maxVersion: o.maxVersion })).status}`;
    } catch {
      return 'refused';
    }
  }

  async function both(urls: Record<Target, string>, o: Parameters<typeof get>[1]): Promise<Record<Target, string>> {
    const out = {} as Record<Target, string>;
    for (const t of TARGETS) out[t] = await get(urls[t], o);
    return out;
  }

  it('--tls-min-version=TLS1.3: a TLS 1.2 client fails the handshake, a TLS 1.3 one is served', async () => {
    const urls = await startBoth('min13', ['--tls-min-version=TLS1.3']);
    expect(await both(urls, { maxVersion: 'TLSv1.2' })).to.deep.equal({ svc: 'refused', reference: 'refused' });
    expect(await both(urls, { minVersion: 'TLSv1.3' })).to.deep.equal({ svc: 'ok 200', reference: 'ok 200' });
  });

  it('--tls-max-version=TLS1.2: a client insisting on TLS 1.3 fails, TLS 1.2 is served', async () => {
    const urls = await startBoth('max12', ['--tls-max-version=TLS1.2']);
    expect(await both(urls, { minVersion: 'TLSv1.3' })).to.deep.equal({ svc: 'refused', reference: 'refused' });
    expect(await both(urls, { maxVersion: 'TLSv1.2' })).to.deep.equal({ svc: 'ok 200', reference: 'ok 200' });
  });

  it('--raft-read-timeout / --raft-write-timeout reach the member; 0 is refused naming the flag', () => {
    const release = releaseFor('3.5.21');
    const r = parseServerConfig(['--raft-read-timeout=2s', '--raft-write-timeout=1500ms'], {}, release);
    expect([r.config.raftReadTimeoutMs, r.config.raftWriteTimeoutMs]).to.deep.equal([2000, 1500]);
    expect(() => parseServerConfig(['--raft-write-timeout=0s'], {}, release)).to.throw(/--raft-write-timeout must be > 0/);
  });

  it('a minimum above the maximum stops svc with exit status 2 and the reference message', async () => {
    const r = await runSvc(['--tls-min-version=TLS1.3', '--tls-max-version=TLS1.2', `--data-dir=${join(dir, 'never')}`], { version: '3.5.21' });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/min version \(TLS1\.3\) is greater than max version \(TLS1\.2\)/);
  });

  it('--client-cert-allowed-hostname: only a client certificate naming that SAN is served', async () => {
    const urls = await startBoth('host', ['--client-cert-auth', '--client-cert-allowed-hostname=svc-peer.example']);
    expect(await both(urls, named)).to.deep.equal({ svc: 'ok 200', reference: 'ok 200' });
    expect(await both(urls, {})).to.deep.equal({ svc: 'refused', reference: 'refused' });
  });

  it('--auth-token-ttl=2: a simple token used every half second stays good; idle for 4.5 s it is refused', async () => {
    const m = await startSideBySide({ dir, tag: 'ttl', procs, flags: ['--auth-token-ttl=2'] });
    const urls = { svc: m.svc.clientUrl, reference: m.reference.clientUrl };
    const range = async (url: string, token: string): Promise<string> => {
      const res = await fetch(`${url}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('k').toString('base64') }), headers: { Authorization: token } });
      const json = (await res.json()) as { error?: string };
      return json.error ?? 'ok';
    };
    const tokens = {} as Record<Target, string>;
    for (const t of TARGETS) {
      for (const args of [['user', 'add', 'root', '--new-user-password=rootpw'], ['user', 'grant-role', 'root', 'root'], ['auth', 'enable']]) {
        const r = await etcdctl([`--endpoints=${urls[t]}`, ...args], { bin: ref35('etcdctl') });
        expect(r.code, `${t}: etcdctl ${args.join(' ')}: ${r.stderr}`).to.equal(0);
      }
      const res = await fetch(`${urls[t]}/v3/auth/authenticate`, { method: 'POST', body: JSON.stringify({ name: 'root', password: 'rootpw' }) });
      tokens[t] = ((await res.json()) as { token: string }).token;
    }
    // in use for 3 s, longer than the TTL (each use well within 2 s of the last, even on a busy machine)
    for (let i = 0; i < 7; i++) {
      for (const t of TARGETS) expect(await range(urls[t], tokens[t]), `${t} after ${i * 0.5} s in use`).to.equal('ok');
      await sleep(500);
    }
    await sleep(4500);
    const said = {} as Record<Target, string>;
    for (const t of TARGETS) said[t] = await range(urls[t], tokens[t]);
    expect(said).to.deep.equal({ svc: 'etcdserver: invalid auth token', reference: 'etcdserver: invalid auth token' });
  });

  it('--peer-client-cert-file with --peer-cert-allowed-hostname: members dial with that certificate and form a cluster; another is refused', async () => {
    const ports = await freePorts(4);
    const ic = `p0=https://127.0.0.1:${ports[1]},p1=https://127.0.0.1:${ports[3]}`;
    const namedFiles = { cert: join(dir, 'named.pem'), key: join(dir, 'named-key.pem') };
    const members = [0, 1].map((i) => {
      const c = `http://127.0.0.1:${ports[2 * i]}`;
      const p = `https://127.0.0.1:${ports[2 * i + 1]}`;
      const proc = spawnSvc(
        [
          `--name=p${i}`, `--data-dir=${join(dir, `p${i}`)}`, `--listen-client-urls=${c}`, `--advertise-client-urls=${c}`,
          `--listen-peer-urls=${p}`, `--initial-advertise-peer-urls=${p}`, `--initial-cluster=${ic}`,
          `--peer-cert-file=${pki.serverCertFile}`, `--peer-key-file=${pki.serverKeyFile}`, `--peer-trusted-ca-file=${pki.caFile}`,
          '--peer-client-cert-auth', '--peer-cert-allowed-hostname=svc-peer.example',
          `--peer-client-cert-file=${namedFiles.cert}`, `--peer-client-key-file=${namedFiles.key}`,
          '--raft-read-timeout=2s', '--raft-write-timeout=2s',
        ],
        { logFile: join(dir, `p${i}.log`), name: `p${i}` },
      );
      procs.push(proc);
      return { proc, client: c };
    });
    for (const m of members) await waitForHttp(`${m.client}/health`, { timeoutMs: 30000, process: m.proc });
    const peer = `https://127.0.0.1:${ports[1]}/version`;
    expect((await httpGet(peer, { ca: pki.ca, ...named })).status).to.equal(200);
    // the server certificate names 127.0.0.1 and localhost, not the allowed hostname
    let refused = false;
    await httpGet(peer, { ca: pki.ca, cert: pki.serverCert, key: pki.serverKey }).catch(() => (refused = true));
    expect(refused, 'a peer certificate without the allowed SAN was served').to.equal(true);
  });
});

describe('--experimental-warning-apply-duration (side by side with the reference 3.5)', function () {
  this.timeout(60000);
  const run = useProcessDir('svc-applywarn-');

  it('an apply slower than the duration is logged as "apply request took too long" with the expected duration', async () => {
    const both = await startSideBySide({ dir: run.dir, tag: 'warn', procs: run.procs, flags: ['--experimental-warning-apply-duration=1ns'] });
    for (const target of TARGETS) {
      const m = both[target];
      const r = await etcdctl([`--endpoints=${m.clientUrl}`, 'put', 'slow', 'v'], { bin: ref35('etcdctl') });
      expect(r.code, target).to.equal(0);
      const line = await m.proc.waitForLog(/"msg":"apply request took too long".*/, 10000);
      expect(line, target).to.contain('"expected-duration":"1ns"');
    }
  });
});

describe('--experimental-compaction-batch-limit and -sleep-interval (side by side with the reference 3.5)', function () {
  this.timeout(60000);
  const run = useProcessDir('svc-compbatch-');

  /** A metric's value from /metrics (svc's svc_ names are the reference's etcd_ ones). */
  async function metric(url: string, name: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.replace(/^etcd_/, 'svc_').startsWith(`${name} `));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  }

  it('a compaction deletes in batches of the limit: the same number of pauses and keys compacted as the reference', async () => {
    const seen = {} as Record<Target, { pauses: number; keys: number }>;
    const both = await startSideBySide({ dir: run.dir, tag: 'batch', procs: run.procs, flags: ['--experimental-compaction-batch-limit=5', '--experimental-compaction-sleep-interval=1ms'] });
    for (const target of TARGETS) {
      const m = both[target];
      // 23 revisions of one key: 22 old ones to delete, 23 entries to scan in batches of 5
      for (let k = 0; k < 23; k++) {
        await fetch(`${m.clientUrl}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('k').toString('base64'), value: Buffer.from(String(k)).toString('base64') }) });
      }
      const pausesBefore = await metric(m.clientUrl, 'svc_debugging_mvcc_db_compaction_pause_duration_milliseconds_count');
      const keysBefore = await metric(m.clientUrl, 'svc_debugging_mvcc_db_compaction_keys_total');
      const r = await etcdctl([`--endpoints=${m.clientUrl}`, 'compaction', '--physical', '24'], { bin: ref35('etcdctl') });
      expect(r.code, `${target}: ${r.stderr}`).to.equal(0);
      seen[target] = {
        pauses: (await metric(m.clientUrl, 'svc_debugging_mvcc_db_compaction_pause_duration_milliseconds_count')) - pausesBefore,
        keys: (await metric(m.clientUrl, 'svc_debugging_mvcc_db_compaction_keys_total')) - keysBefore,
      };
    }
    expect(seen.svc).to.deep.equal(seen.reference);
    expect(seen.svc).to.deep.equal({ pauses: 4, keys: 22 });
  });

  it('--experimental-compact-hash-check-enabled: HashKV at a compaction\'s revision answers the hash it took, compacted or not; the leader\'s pass checks them', async () => {
    const seen = {} as Record<Target, string[]>;
    const both = await startSideBySide({ dir: run.dir, tag: 'hashes', procs: run.procs, flags: ['--experimental-compact-hash-check-enabled', '--experimental-compact-hash-check-time=300ms'] });
    for (const target of TARGETS) {
      const m = both[target];
      const ctl = async (...args: string[]) => {
        const r = await etcdctl([`--endpoints=${m.clientUrl}`, ...args], { bin: ref35('etcdctl') });
        return r.code === 0 ? r.stdout.trim() : `exit ${r.code}: ${/compacted|future/.exec(r.stderr)?.[0] ?? r.stderr}`;
      };
      const hashkv = async (rev: number) => {
        const out = await ctl('endpoint', 'hashkv', `--rev=${rev}`, '-w', 'json');
        if (out.startsWith('exit')) return `${rev}: ${out}`;
        const h = (JSON.parse(out) as Array<{ HashKV: { hash: number; compact_revision?: number } }>)[0].HashKV;
        return `${rev}: hash ${h.hash} compact_revision ${h.compact_revision ?? 0}`;
      };
      for (let k = 0; k < 5; k++) await ctl('put', 'a', `v${k}`);
      await ctl('put', 'b', 'x');
      await ctl('compaction', '--physical', '4');
      const first = [await hashkv(4), await hashkv(5), await hashkv(3)];
      await ctl('compaction', '--physical', '6');
      seen[target] = [...first, await hashkv(6), await hashkv(4)];
      const line = await m.proc.waitForLog(/"msg":"finished compaction hash check","number-of-hashes-checked":2/, 10000);
      expect(line, target).to.be.a('string');
    }
    expect(seen.svc).to.deep.equal(seen.reference);
    // the stored hashes: rev 4 over the uncompacted store (-1), rev 6 over the store compacted at 4; rev 3 is gone
    expect(seen.svc[0]).to.match(/^4: hash \d+ compact_revision -1$/);
    expect(seen.svc[2]).to.match(/^3: exit \d+: compacted/);
    expect(seen.svc[3]).to.match(/^6: hash \d+ compact_revision 4$/);
    expect(seen.svc[4]).to.equal(seen.svc[0]);
  });
});

describe('--experimental-bootstrap-defrag-threshold-megabytes (side by side with the reference 3.5)', function () {
  this.timeout(120000);
  const run = useProcessDir('svc-bootdefrag-');

  it('below the threshold the start skips defragmentation; above it the db file shrinks before serving', async () => {
    const ports = await freePorts(4);
    for (const [i, target] of TARGETS.entries()) {
      const dataDir = join(run.dir, `${target}.data`);
      const db = join(dataDir, 'member', 'snap', 'db');
      const start = async (tag: string, flags: string[]): Promise<LoggedProcess> => {
        const clientUrl = `http://127.0.0.1:${ports[2 * i]}`;
        const peerUrl = `http://127.0.0.1:${ports[2 * i + 1]}`;
        const args = [...memberArgs({ name: 'm', dataDir, clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'bootdefrag', state: 'new' }), ...flags];
        const log = { logFile: join(run.dir, `${target}-${tag}.log`), name: `${target}-${tag}` };
        const p = target === 'svc' ? spawnSvc(args, { ...log, version: '3.5.21' }) : spawnLogged(ref35('etcd'), args, log);
        run.procs.push(p);
        await waitForHttp(`${clientUrl}/health`, { timeoutMs: 30000, process: p });
        return p;
      };
      const url = `http://127.0.0.1:${ports[2 * i]}`;
      let p = await start('fill', []);
      const value = Buffer.alloc(100_000, 'x').toString('base64');
      for (let k = 0; k < 40; k++) await fetch(`${url}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(`k${k}`).toString('base64'), value }) });
      const del = await (await fetch(`${url}/v3/kv/deleterange`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('k').toString('base64'), range_end: Buffer.from('l').toString('base64') }) })).json() as { header: { revision: string } };
      await fetch(`${url}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: del.header.revision, physical: true }) });
      await p.stop('SIGTERM', 15000);
      const filled = statSync(db).size;

      p = await start('skip', ['--experimental-bootstrap-defrag-threshold-megabytes=1000']);
      expect(p.log(), target).to.match(/"msg":"Skipping defragmentation".*"experimental-bootstrap-defrag-threshold-bytes":1048576000/);
      await p.stop('SIGTERM', 15000);
      expect(statSync(db).size, `${target}: the db changed although the start skipped defragmentation`).to.be.at.least(filled * 0.9);

      p = await start('defrag', ['--experimental-bootstrap-defrag-threshold-megabytes=1']);
      expect(p.log(), target).to.not.contain('Skipping defragmentation');
      await p.stop('SIGTERM', 15000);
      expect(statSync(db).size, `${target}: ${filled} bytes before`).to.be.below(filled / 2);
    }
  });
});

describe('--backend-batch-limit and --backend-batch-interval (side by side with the reference 3.5)', function () {
  this.timeout(60000);
  const run = useProcessDir('svc-batch-');

  /** Commits of the db (the commit-duration histogram's count) made by 10 puts. */
  async function commitsOf10Puts(tag: string, flags: string[]): Promise<Record<Target, number>> {
    const out = {} as Record<Target, number>;
    const both = await startSideBySide({ dir: run.dir, tag, procs: run.procs, flags });
    for (const target of TARGETS) {
      const m = both[target];
      const count = async (): Promise<number> => {
        const text = await (await fetch(`${m.clientUrl}/metrics`)).text();
        const line = text.split('\n').find((l) => /^(etcd|svc)_disk_backend_commit_duration_seconds_count /.test(l));
        return Number(line?.split(' ')[1] ?? NaN);
      };
      const before = await count();
      for (let k = 0; k < 10; k++) await fetch(`${m.clientUrl}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(`k${k}`).toString('base64'), value: 'dg==' }) });
      out[target] = (await count()) - before;
      await m.proc.stop('SIGTERM', 15000);
    }
    return out;
  }

  it('a limit of 1 commits every write; a large limit and a long interval commit none of them', async () => {
    const each = await commitsOf10Puts('each', ['--backend-batch-limit=1', '--backend-batch-interval=1h']);
    expect(each.svc, JSON.stringify(each)).to.be.at.least(10);
    expect(each.reference, JSON.stringify(each)).to.be.at.least(10);
    expect(await commitsOf10Puts('none', ['--backend-batch-limit=100000', '--backend-batch-interval=1h'])).to.deep.equal({ svc: 0, reference: 0 });
  });
});

describe('--enable-log-rotation and --log-rotation-config-json (side by side with the reference 3.5)', function () {
  this.timeout(120000);
  const run = useProcessDir('svc-logrotate-');

  it('the same refusals: no file output, two file outputs, a config that is not JSON or has a field of the wrong type', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /--log-outputs requires a single file path when --log-rotate-config-json is defined/],
      [[`--log-outputs=${join(run.dir, 'a.log')},${join(run.dir, 'b.log')}`], /--log-outputs requires a single file path when --log-rotate-config-json is defined/],
      [[`--log-outputs=${join(run.dir, 'a.log')}`, '--log-rotation-config-json={bad'], /improperly formatted log rotation config: /],
      [[`--log-outputs=${join(run.dir, 'a.log')}`, '--log-rotation-config-json={"maxsize":"x"}'], /invalid log rotation config: json: cannot unmarshal string into Go struct field logRotationConfig\.Logger\.maxsize of type int/],
    ];
    for (const [flags, refusal] of cases) {
      const args = ['--enable-log-rotation', ...flags, `--data-dir=${join(run.dir, 'never')}`];
      const svc = await runSvc(args, { version: '3.5.21' });
      expect(svc.code, flags.join(' ')).to.not.equal(0);
      expect(svc.stderr, flags.join(' ')).to.match(refusal);
      const ref = await new Promise<string>((resolve) => execFile(ref35('etcd'), args, { timeout: 10000 }, (_e, _o, stderr) => resolve(stderr)));
      expect(ref, `reference: ${flags.join(' ')}`).to.match(refusal);
    }
    expect(existsSync(join(run.dir, 'never'))).to.equal(false);
  });

  it('maxsize 1, maxbackups 1, compress: the file rotates near 1 MiB into one gzipped backup, as the reference\'s does', async () => {
    const shapes = {} as Record<Target, string[]>;
    for (const target of TARGETS) mkdirSync(join(run.dir, target));
    const config = '--log-rotation-config-json={"maxsize": 1, "maxbackups": 1, "compress": true}';
    const ports = await freePorts(4);
    for (const [i, target] of TARGETS.entries()) {
      const logFile = join(run.dir, target, 'm.log');
      const m = spawnSingleMember(target, { dir: run.dir, name: `rot-${target}`, clientPort: ports[2 * i], peerPort: ports[2 * i + 1], flags: ['--enable-log-rotation', `--log-outputs=${logFile}`, config, '--experimental-warning-apply-duration=1ns'] });
      run.procs.push(m.proc);
      await waitForHttp(`${m.clientUrl}/health`, { timeoutMs: 30000, process: m.proc });
      // each put logs "apply request took too long" (the reference with its 1.5 KiB key, svc shorter): puts until the
      // file rotated twice, so that maxbackups 1 has removed the first backup
      const backups = () => readdirSync(join(run.dir, target)).filter((f) => f !== 'm.log');
      const seen = new Set<string>();
      for (let k = 0; k < 20000 && seen.size < 2; k += 8) {
        await Promise.all(Array.from({ length: 8 }, async (_, j) => {
          const key = Buffer.from(`${String(k + j).padStart(6, '0')}`.padEnd(1536, 'k')).toString('base64');
          const r = await fetch(`${m.clientUrl}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key, value: Buffer.from('v').toString('base64') }) });
          expect(r.status).to.equal(200);
        }));
        for (const b of backups()) seen.add(b.replace(/\.gz$/, ''));
      }
      expect(seen.size, `${target}: rotations seen`).to.equal(2);
      // the reference compresses in the background: wait for the listing to settle
      const shape = () => readdirSync(join(run.dir, target)).map((f) => f.replace(/^m-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}/, 'm-<time>')).sort();
      for (const deadline = Date.now() + 10000; Date.now() < deadline && shape().join() !== 'm-<time>.log.gz,m.log'; await sleep(200));
      shapes[target] = shape();
      const backup = readdirSync(join(run.dir, target)).find((f) => f.endsWith('.gz'));
      expect(backup, `${target}: ${shape().join(', ')}; the file is ${statSync(logFile).size} bytes`).to.be.a('string');
      const unpacked = gunzipSync(readFileSync(join(run.dir, target, backup!))).length;
      expect(unpacked, `${target}: the backup's size`).to.be.within(1024 * 1024 - 80 * 1024, 1024 * 1024);
      expect(statSync(logFile).size, `${target}: the current file`).to.be.below(1024 * 1024);
    }
    expect(shapes.svc).to.deep.equal(shapes.reference);
    expect(shapes.svc).to.deep.equal(['m-<time>.log.gz', 'm.log']);
  });
});
