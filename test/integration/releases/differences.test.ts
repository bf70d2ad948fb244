// Every row of the spec's release tables, per release (3.3.27, 3.4.34, 3.5.21), against real one-member
// clusters: --enable-v2, /v3beta, the renamed metrics, the loggers and their flags, the YAML config file,
// PUT /config/local/log, TLS flags (with the deprecated --ca-file), unknown flags, the /health body and the
// 3.5-only AuthStatus RPC. (svcctl rows are covered by test/integration/svcctl.)

import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdctl } from '../../../harness/etcdctl.js';
import { makeTestPki, type TestPki } from '../../../harness/tls.js';
import { httpGet, sleep, waitForHttp } from '../../../harness/process.js';
import { b64, printLogsOnFailure, startSvcCluster, unb64, postJson, type SvcCluster } from '../../../harness/svc-cluster.js';
import { CAPNSLOG_LINE, NODE_WARNING, V33, V34, V35, expectExit, grpcCall, linesMatching, resetConnection, startRawMember, zapRecords, type RawMember, type RawMemberOptions } from './helpers.js';

const MVCC = ['db_total_size_in_bytes', 'put_total', 'delete_total', 'txn_total', 'range_total'];
const LEADER_HELP = '# HELP svc_server_is_leader Whether or not this member is a leader. 1 if is, 0 otherwise.';
const GRPC_UNIMPLEMENTED = 12;

/** A metric family is exposed under exactly this name. */
const hasMetric = (text: string, name: string) => new RegExp(`^# TYPE ${name} `, 'm').test(text);

/** PUT a body (raw text) to a URL: status, Warning header and body. */
async function put(url: string, body: string): Promise<{ status: number; warning: string | null; text: string }> {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } });
  return { status: res.status, warning: res.headers.get('warning'), text: await res.text() };
}

/** Lines of a member's current log that are debug records, in either log format. */
const debugLines = (log: string) => linesMatching(log, /^\S+ \S+ D \| |"level":"debug"/);

/** Makes the member log at debug level: connection resets are logged as debug records. Returns the lines seen. */
async function provokeDebug(clientURL: string, log: () => string, tries = 30): Promise<string[]> {
  for (let k = 0; k < tries; k++) {
    await resetConnection(clientURL);
    await sleep(100);
    const lines = debugLines(log());
    if (lines.length > 0) return lines;
  }
  return debugLines(log());
}

// One-member clusters started with unusual flags; each test closes its own, this catches the rest.
const raws: RawMember[] = [];
async function raw(o: RawMemberOptions): Promise<RawMember> {
  const m = await startRawMember(o);
  raws.push(m);
  return m;
}
const dirs: string[] = [];
/** A temp dir removed after the run (for files a member writes besides its data dir). */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-rel-'));
  dirs.push(d);
  return d;
}
after(async function () {
  this.timeout(30000);
  await Promise.all(raws.map((m) => m.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Waits for a raw member's /health (https when tls is given). */
async function healthy(m: RawMember, tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }): Promise<void> {
  await waitForHttp(`${m.clientURL}/health`, { timeoutMs: 60000, process: m.process, ...tls });
}

/** Starts a member that must refuse its flags: exit status 2 and `message` on its output. */
async function expectUsageError(version: string, args: string[], message: RegExp, configYaml?: RawMemberOptions['configYaml']): Promise<void> {
  const m = await raw({ version, args, configYaml });
  const st = await expectExit(m.process);
  const log = m.process.log();
  expect(st.code, log).to.equal(2);
  expect(log).to.match(message);
  await m.close();
}

const yamlFor = (extra: string) => (m: { name: string; dataDir: string; clientURL: string; peerURL: string }) =>
  [
    `name: ${m.name}`,
    `data-dir: ${m.dataDir}`,
    `listen-client-urls: ${m.clientURL}`,
    `advertise-client-urls: ${m.clientURL}`,
    `listen-peer-urls: ${m.peerURL}`,
    `initial-advertise-peer-urls: ${m.peerURL}`,
    `initial-cluster: ${m.name}=${m.peerURL}`,
    extra,
    '',
  ].join('\n');

/** The rows every release answers, each according to the release table. */
function commonRows(version: string, get: () => SvcCluster) {
  const minor = version.split('.').slice(0, 2).join('.');
  const url = () => get().members[0].clientURL;

  it(`/version answers {"etcdserver":"${version}","etcdcluster":"${minor}.0"}`, async function () {
    const res = await httpGet(`${url()}/version`);
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal({ etcdserver: version, etcdcluster: `${minor}.0` });
  });

  it(`/health body is ${minor === '3.5' ? '{"health":"true","reason":""}' : '{"health":"true"}'}`, async function () {
    const res = await httpGet(`${url()}/health`);
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal(minor === '3.5' ? { health: 'true', reason: '' } : { health: 'true' });
  });

  it(`metrics: ${minor === '3.3' ? 'only svc_debugging_mvcc_*' : minor === '3.4' ? 'both svc_debugging_mvcc_* and svc_mvcc_*' : 'only svc_mvcc_*'}; svc_server_is_leader with its help text`, async function () {
    const c = get();
    await c.put(0, 'm/a', '1');
    await c.put(0, 'm/b', '2');
    await c.get(0, 'm/a');
    const del = await c.post(0, '/v3/kv/deleterange', { key: b64('m/b') });
    expect(del.status).to.equal(200);
    // a transaction counts as one when it holds more than one operation (the reference's rule)
    const txn = await c.post(0, '/v3/kv/txn', { success: [{ request_put: { key: b64('m/c'), value: b64('3') } }, { request_range: { key: b64('m/a') } }] });
    expect(txn.status).to.equal(200);
    const text = (await httpGet(`${url()}/metrics`)).body;
    for (const n of MVCC) {
      expect(hasMetric(text, `svc_debugging_mvcc_${n}`), `svc_debugging_mvcc_${n}`).to.equal(minor !== '3.5');
      expect(hasMetric(text, `svc_mvcc_${n}`), `svc_mvcc_${n}`).to.equal(minor !== '3.3');
    }
    const served = minor === '3.3' ? 'svc_debugging_mvcc' : 'svc_mvcc';
    expect(text).to.match(new RegExp(`^${served}_put_total [1-9]`, 'm'));
    expect(text).to.match(new RegExp(`^${served}_delete_total [1-9]`, 'm'));
    expect(text).to.match(new RegExp(`^${served}_txn_total [1-9]`, 'm'));
    expect(text).to.match(new RegExp(`^${served}_range_total [1-9]`, 'm'));
    expect(text.split('\n')).to.include(LEADER_HELP);
    expect(text).to.match(/^svc_server_is_leader 1$/m);
  });

  it(`--enable-v2 defaults to ${minor === '3.3'}: /v2/keys ${minor === '3.3' ? 'served' : 'not served'}; /health, /metrics and the gateway work`, async function () {
    const v2 = await httpGet(`${url()}/v2/keys/`);
    expect(v2.status).to.equal(minor === '3.3' ? 200 : 404);
    expect((await httpGet(`${url()}/health`)).status).to.equal(200);
    expect((await httpGet(`${url()}/metrics`)).status).to.equal(200);
    await get().put(0, 'v2off/k', 'gateway-works');
    expect(await get().get(0, 'v2off/k')).to.equal('gateway-works');
  });

  const beta = minor === '3.3' ? 'served like /v3' : minor === '3.4' ? 'redirected (308) to the same /v3 path' : 'not found (404)';
  it(`/v3beta/... is ${beta}`, async function () {
    const body = { key: b64(`beta/${minor}`), value: b64('via-v3beta') };
    const a = await postJson(`${url()}/v3beta/kv/put`, body);
    if (minor === '3.3') {
      expect(a.status, a.text).to.equal(200);
      const r = await postJson(`${url()}/v3beta/kv/range`, { key: b64(`beta/${minor}`) });
      expect(r.status).to.equal(200);
      expect(unb64((r.body.kvs as Array<{ value: string }>)[0].value)).to.equal('via-v3beta');
    } else if (minor === '3.4') {
      expect(a.status, a.text).to.equal(308);
      const res = await fetch(`${url()}/v3beta/kv/put`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, redirect: 'manual' });
      expect(res.status).to.equal(308);
      expect(res.headers.get('location')).to.equal('/v3/kv/put');
      // a client that follows redirects repeats the POST, body included, at /v3
      const followed = await fetch(`${url()}/v3beta/kv/put`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
      expect(followed.status).to.equal(200);
      expect(followed.redirected).to.equal(true);
      expect(new URL(followed.url).pathname).to.equal('/v3/kv/put');
      expect(await get().get(0, `beta/${minor}`)).to.equal('via-v3beta');
    } else {
      expect(a.status, a.text).to.equal(404);
      expect(await get().get(0, `beta/${minor}`)).to.equal(undefined);
    }
  });

  it(`PUT /config/local/log {"Level":"DEBUG"} -> 204 and debug records appear${minor === '3.5' ? ', with a deprecation warning (log + Warning: 299)' : ''}; bad JSON or an unknown level -> 400`, async function () {
    const c = get();
    expect(debugLines(c.currentLog(0)), 'no debug records before').to.deep.equal([]);
    const ok = await put(`${url()}/config/local/log`, '{"Level":"DEBUG"}');
    expect(ok.status, ok.text).to.equal(204);
    if (minor === '3.5') {
      expect(ok.warning).to.match(/^299 /);
      await c.waitForLog(0, /"level":"warn".*\/config\/local\/log is deprecated/, 10000);
    } else {
      expect(ok.warning).to.equal(null);
      expect(linesMatching(c.currentLog(0), /config\/local\/log is deprecated/)).to.deep.equal([]);
    }
    expect(await provokeDebug(url(), () => c.currentLog(0)), 'debug records after the change').to.not.deep.equal([]);
    expect((await put(`${url()}/config/local/log`, '{"Level":')).status).to.equal(400);
    expect((await put(`${url()}/config/local/log`, '{"Level":"LOUD"}')).status).to.equal(400);
    expect((await put(`${url()}/config/local/log`, '{"Level":"INFO"}')).status).to.equal(204);
  });

  it(`the default logger is ${minor === '3.5' ? 'zap (JSON lines with level/ts/caller/msg)' : 'capnslog (plain text lines)'}`, async function () {
    const lines = get()
      .currentLog(0)
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('=== svc start') && !NODE_WARNING.test(l));
    expect(lines.length).to.be.greaterThan(5);
    if (minor === '3.5') {
      for (const r of zapRecords(get().currentLog(0))) expect(r).to.include.keys('level', 'ts', 'caller', 'msg');
    } else {
      for (const l of lines) expect(l).to.match(CAPNSLOG_LINE);
    }
  });

  it(`pre-vote is ${minor === '3.5' ? 'on' : 'off'} by default`, async function () {
    const preCandidate = linesMatching(get().currentLog(0), /became pre-candidate/);
    if (minor === '3.5') expect(preCandidate).to.not.deep.equal([]);
    else expect(preCandidate).to.deep.equal([]);
  });

  it('an unknown flag is a usage error: exit status 2', async function () {
    await expectUsageError(version, ['--no-such-flag=1'], /no-such-flag/);
  });

  if (minor !== '3.5') {
    it('Downgrade (gRPC) is not implemented', async function () {
      const d = await grpcCall(url(), 'Maintenance', 'Downgrade', { action: 'VALIDATE', version: '3.3.0' });
      expect(d).to.deep.include({ ok: false, code: GRPC_UNIMPLEMENTED });
    });
  }

  it(`AuthStatus (gRPC) ${minor === '3.5' ? 'answers on a 3.5 cluster' : 'is not implemented'}`, async function () {
    const status = await grpcCall(url(), 'Auth', 'AuthStatus', {});
    if (minor === '3.5') {
      expect(status.ok, JSON.stringify(status)).to.equal(true);
      expect(status.ok && status.answer.enabled).to.equal(false);
    } else {
      expect(status).to.deep.include({ ok: false, code: GRPC_UNIMPLEMENTED });
    }
  });

  if (minor === '3.5') {
    // (3.3/3.4 answering Downgrade with UNIMPLEMENTED is in FAILING.md: they validate it instead)
    it('Downgrade (gRPC) answers on a 3.5 cluster: VALIDATE of 3.4 is accepted, of 3.3 refused', async function () {
      const ok = await grpcCall(url(), 'Maintenance', 'Downgrade', { action: 'VALIDATE', version: '3.4.0' });
      expect(ok.ok, JSON.stringify(ok)).to.equal(true);
      const bad = await grpcCall(url(), 'Maintenance', 'Downgrade', { action: 'VALIDATE', version: '3.3.0' });
      expect(bad, JSON.stringify(bad)).to.deep.include({ ok: false, code: 3 });
    });
  }
}

/** A default one-member cluster of `version`, shared by the release's common rows. */
function releaseSuite(version: string, rows: (get: () => SvcCluster) => void) {
  describe(`releases: differences, ${version}`, function () {
    this.timeout(90000);
    let c: SvcCluster;
    printLogsOnFailure(() => [c]);
    before(async function () {
      this.timeout(90000);
      c = await startSvcCluster({ size: 1, version, timeoutMs: 60000 });
    });
    after(async function () {
      this.timeout(30000);
      await c?.close();
    });
    commonRows(version, () => c);
    rows(() => c);
  });
}

releaseSuite(V33, () => {
  it('--logger, --log-outputs and --log-level do not exist in 3.3 (exit status 2)', async function () {
    await expectUsageError(V33, ['--logger=zap'], /flag provided but not defined: -logger/);
    await expectUsageError(V33, ['--log-outputs=stderr'], /flag provided but not defined: -log-outputs/);
  });

  it('config file: the 3.3 string field log-output is read (with snapshot-count); a log-outputs list is an unknown key (exit 2)', async function () {
    const m = await raw({ version: V33, configYaml: yamlFor('log-output: default\nsnapshot-count: 5000') });
    await healthy(m);
    expect(linesMatching(m.process.log(), CAPNSLOG_LINE)).to.not.deep.equal([]);
    await m.close();
    await expectUsageError(V33, [], /log-outputs/, yamlFor('log-outputs: [default]'));
  });
});

releaseSuite(V34, () => {
  it('--enable-v2=true serves /v2/keys; --logger=zap writes JSON lines; --log-outputs=stderr,<file> writes to both (--snapshot-count accepted)', async function () {
    const dir = tempDir();
    const file = join(dir, 'zap.log');
    const again = await raw({ version: V34, dir, args: ['--enable-v2=true', '--logger=zap', '--log-level=info', `--log-outputs=stderr,${file}`, '--snapshot-count=5000'] });
    await healthy(again);
    const v2put = await fetch(`${again.clientURL}/v2/keys/rel`, { method: 'PUT', body: 'value=v2-on', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(v2put.status).to.equal(201);
    const v2get = await httpGet(`${again.clientURL}/v2/keys/rel`);
    expect(v2get.status).to.equal(200);
    expect((JSON.parse(v2get.body) as { node: { value: string } }).node.value).to.equal('v2-on');
    for (const r of zapRecords(again.process.log())) expect(r).to.include.keys('level', 'ts', 'caller', 'msg');
    expect(existsSync(file)).to.equal(true);
    const fileRecords = zapRecords(readFileSync(file, 'utf8'));
    expect(fileRecords.map((r) => r.msg)).to.include('starting svc');
    expect(fileRecords.length).to.be.greaterThan(5);
  });

  it('--log-outputs with several writers needs --logger=zap (capnslog: exit 2)', async function () {
    await expectUsageError(V34, ['--log-outputs=stderr,stdout'], /zap/);
  });

  it('--log-output is the deprecated alias of --log-outputs (warning; the file gets the lines); --debug is deprecated (warning, debug records)', async function () {
    const dir = tempDir();
    const file = join(dir, 'old.log');
    const m = await raw({ version: V34, dir, args: [`--log-output=${file}`, '--debug'] });
    await healthy(m);
    const text = readFileSync(file, 'utf8');
    expect(text).to.match(/--log-output is renamed --log-outputs/);
    expect(text).to.match(/--debug is deprecated/);
    expect(linesMatching(text, CAPNSLOG_LINE).length).to.be.greaterThan(5);
    expect(await provokeDebug(m.clientURL, () => readFileSync(file, 'utf8')), 'debug records with --debug').to.not.deep.equal([]);
  });

  it('config file: log-outputs is a list ([default]); a string there is refused (exit 2)', async function () {
    const m = await raw({ version: V34, configYaml: yamlFor('logger: zap\nlog-outputs: [default]') });
    await healthy(m);
    const records = zapRecords(m.process.log());
    expect(records.map((r) => r.msg)).to.include('starting svc');
    await m.close();
    await expectUsageError(V34, [], /log-outputs.*must be a list/, yamlFor('log-outputs: default'));
  });

  describe('TLS', function () {
    let pki: TestPki;
    before(async function () {
      this.timeout(60000);
      pki = makeTestPki(tempDir());
    });

    const tlsArgs = () => [`--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`];
    const peerArgs = () => [`--peer-cert-file=${pki.serverCertFile}`, `--peer-key-file=${pki.serverKeyFile}`, `--peer-trusted-ca-file=${pki.caFile}`, '--peer-client-cert-auth'];
    const refusedWithoutCert = async (m: RawMember, base = m.clientURL) => {
      let answered: number | undefined;
      try {
        answered = (await httpGet(`${base}/${base === m.clientURL ? 'health' : 'version'}`, { ca: pki.ca })).status;
      } catch {
        answered = undefined;
      }
      expect(answered, 'a client without a certificate').to.equal(undefined);
    };

    it('--cert-file/--key-file/--trusted-ca-file/--client-cert-auth (and --peer-*): https; a client without a certificate is refused; etcdctl with --cacert/--cert/--key works', async function () {
      const m = await raw({
        version: V34,
        clientScheme: 'https',
        peerScheme: 'https',
        args: [...tlsArgs(), `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth', ...peerArgs()],
      });
      await healthy(m, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
      await refusedWithoutCert(m);
      await refusedWithoutCert(m, m.peerURL);
      const peer = await httpGet(`${m.peerURL}/version`, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
      expect(peer.status, 'peer /version with a certificate').to.equal(200);
      const endpoints = [m.clientURL];
      const certs = [`--cacert=${pki.caFile}`, `--cert=${pki.clientCertFile}`, `--key=${pki.clientKeyFile}`];
      const p = await etcdctl([...certs, 'put', 'tls/k', 'over-tls'], { endpoints });
      expect(p.code, p.stderr).to.equal(0);
      expect(p.stdout.trim()).to.equal('OK');
      const g = await etcdctl([...certs, 'get', 'tls/k', '--print-value-only'], { endpoints });
      expect(g.stdout.trim()).to.equal('over-tls');
      const noCert = await etcdctl([`--cacert=${pki.caFile}`, '--command-timeout=3s', '--dial-timeout=3s', 'get', 'tls/k'], { endpoints });
      expect(noCert.code, 'etcdctl without a client certificate').to.not.equal(0);
      await m.close();
    });

    it('--ca-file / --peer-ca-file (deprecated in 3.4) warn and turn client certificate authentication on by themselves', async function () {
      const m = await raw({
        version: V34,
        clientScheme: 'https',
        peerScheme: 'https',
        args: [...tlsArgs(), `--ca-file=${pki.caFile}`, `--peer-cert-file=${pki.serverCertFile}`, `--peer-key-file=${pki.serverKeyFile}`, `--peer-ca-file=${pki.caFile}`],
      });
      await healthy(m, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
      expect(m.process.log()).to.match(/--ca-file is deprecated/);
      expect(m.process.log()).to.match(/--peer-ca-file is deprecated/);
      await refusedWithoutCert(m);
      await refusedWithoutCert(m, m.peerURL);
      const withCert = await httpGet(`${m.clientURL}/health`, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
      expect(withCert.status).to.equal(200);
      await m.close();
    });
  });
});

releaseSuite(V35, () => {
  it('--logger=capnslog is deprecated (warning, plain text); --log-output, --debug and --log-package-levels warn; --enable-v2=true serves /v2/keys', async function () {
    const m = await raw({ version: V35, args: ['--logger=capnslog', '--log-output=stderr', '--debug', '--log-package-levels=etcdserver=INFO', '--enable-v2=true'] });
    await healthy(m);
    const log = m.process.log();
    expect(log).to.match(/--logger=capnslog is deprecated/);
    expect(log).to.match(/--log-output is deprecated/);
    expect(log).to.match(/--debug is deprecated/);
    expect(log).to.match(/--log-package-levels is deprecated/);
    expect(linesMatching(log, /"msg":/), 'no JSON records with capnslog').to.deep.equal([]);
    expect(linesMatching(log, CAPNSLOG_LINE).length).to.be.greaterThan(5);
    expect((await httpGet(`${m.clientURL}/v2/keys/`)).status).to.equal(200);
    await m.close();
  });

  it('--log-outputs=default and several writers with the default zap logger (--snapshot-count accepted)', async function () {
    const first = await raw({ version: V35, args: ['--log-outputs=default', '--snapshot-count=5000'] });
    await healthy(first);
    expect(zapRecords(first.process.log()).map((r) => r.msg)).to.include('starting svc');
    await first.close();
    const dir = tempDir();
    const file = join(dir, 'zap.log');
    const m = await raw({ version: V35, dir, args: [`--log-outputs=stderr,${file}`] });
    await healthy(m);
    expect(zapRecords(readFileSync(file, 'utf8')).map((r) => r.msg)).to.include('starting svc');
    expect(zapRecords(m.process.log()).map((r) => r.msg)).to.include('starting svc');
  });
});
