// --client-crl-file and --peer-crl-file refuse certificates the list revokes (they used to be parsed and
// ignored: a revoked client certificate still connected). The PKI and the CRL are made in-process (harness/tls.ts). A CRL in
// DER form (which the reference reads as well as PEM) is tried side by side with the reference 3.5.
import { strict as assert } from 'node:assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { makeCrl, makeLeafCert, makeTestPki, type TestPki } from '../../../harness/tls.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { spawnSingleMember, TARGETS } from '../../../harness/side-by-side.js';

/** A second client certificate of the test CA ("revoked.pem"), revoked in crl.pem (and crl.der). */
function revokeOne(pki: TestPki): { certFile: string; keyFile: string; crlFile: string } {
  const { cert, key } = makeLeafCert(pki, 'revoked', 'revoked', { extKeyUsage: ['clientAuth', 'serverAuth'], hosts: ['127.0.0.1'] });
  const crl = makeCrl(pki, 'crl', [cert]);
  return { certFile: cert, keyFile: key, crlFile: crl.pem };
}

type KvStub = { Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void };

function putWith(endpoint: string, pki: TestPki, cert: string, key: string): Promise<void> {
  const conn = new Connection(endpoint, { ca: pki.caFile, cert, key });
  const kv = conn.stub('KV') as unknown as KvStub;
  return new Promise<void>((resolve, reject) => kv.Put({ key: Buffer.from('k'), value: Buffer.from('v') }, { deadline: Date.now() + 4000 }, (err) => (err ? reject(err) : resolve()))).finally(() =>
    conn.close(),
  );
}

/** HTTP status of a GET with this client certificate (rejects when the handshake fails). */
async function getWith(url: string, pki: TestPki, cert: string, key: string): Promise<number> {
  return (await httpGet(url, { ca: pki.ca, cert: readFileSync(cert), key: readFileSync(key) })).status;
}

describe('certificate revocation lists (integration)', function () {
  this.timeout(90000);
  let dir: string;
  let proc: LoggedProcess | undefined;
  let pki: TestPki;
  let revoked: ReturnType<typeof revokeOne>;
  let clientPort: number;
  let peerPort: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-crl-'));
    pki = makeTestPki(dir);
    revoked = revokeOne(pki);
    [clientPort, peerPort] = await freePorts(2);
    const client = `https://127.0.0.1:${clientPort}`;
    const peer = `https://127.0.0.1:${peerPort}`;
    proc = spawnSvc(
      [
        '--name=crl',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=crl=${peer}`,
        `--cert-file=${pki.serverCertFile}`,
        `--key-file=${pki.serverKeyFile}`,
        `--trusted-ca-file=${pki.caFile}`,
        '--client-cert-auth',
        `--client-crl-file=${revoked.crlFile}`,
        `--peer-cert-file=${pki.serverCertFile}`,
        `--peer-key-file=${pki.serverKeyFile}`,
        `--peer-trusted-ca-file=${pki.caFile}`,
        '--peer-client-cert-auth',
        `--peer-crl-file=${revoked.crlFile}`,
      ],
      { logFile: join(dir, 'svc.log'), name: 'crl' },
    );
    await proc.waitForLog(/serving client traffic securely/, 30000);
  });

  after(async () => {
    await proc?.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client certificate the CRL does not list connects (gRPC and HTTP)', async () => {
    await putWith(`https://127.0.0.1:${clientPort}`, pki, pki.clientCertFile, pki.clientKeyFile);
    assert.equal(await getWith(`https://127.0.0.1:${clientPort}/health`, pki, pki.clientCertFile, pki.clientKeyFile), 200);
  });

  it('a revoked client certificate is refused (gRPC and HTTP)', async () => {
    await assert.rejects(putWith(`https://127.0.0.1:${clientPort}`, pki, revoked.certFile, revoked.keyFile));
    await assert.rejects(getWith(`https://127.0.0.1:${clientPort}/health`, pki, revoked.certFile, revoked.keyFile));
  });

  it('the peer port refuses a revoked certificate and serves a valid one', async () => {
    assert.equal(await getWith(`https://127.0.0.1:${peerPort}/version`, pki, pki.clientCertFile, pki.clientKeyFile), 200);
    await assert.rejects(getWith(`https://127.0.0.1:${peerPort}/version`, pki, revoked.certFile, revoked.keyFile));
  });
});

/** Status of a JSON gateway put with this client certificate (rejects when the connection is refused). */
function gatewayPut(url: string, pki: TestPki, cert: string, key: string): Promise<number> {
  const body = JSON.stringify({ key: Buffer.from('gw').toString('base64'), value: Buffer.from('v').toString('base64') });
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v3/kv/put`, { method: 'POST', ca: pki.ca, cert: readFileSync(cert), key: readFileSync(key), agent: false, timeout: 4000, headers: { 'Content-Type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

describe('certificate revocation lists in DER form (side by side with the reference 3.5)', function () {
  this.timeout(90000);
  let dir: string;
  let pki: TestPki;
  let revoked: ReturnType<typeof revokeOne>;
  const procs: LoggedProcess[] = [];
  const urls = {} as Record<'svc' | 'reference', string>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-crl-der-'));
    pki = makeTestPki(dir);
    revoked = revokeOne(pki);
    const ports = await freePorts(4);
    await Promise.all(
      TARGETS.map(async (target, i) => {
        const { proc, clientUrl: client } = spawnSingleMember(target, { dir, name: target, clientPort: ports[2 * i], peerPort: ports[2 * i + 1], scheme: 'https',
          flags: [`--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth', `--client-crl-file=${join(dir, 'crl.der')}`] });
        procs.push(proc);
        await waitForHttp(`${client}/health`, { timeoutMs: 30000, ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: proc });
        urls[target] = client;
      }),
    );
  });

  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const target of ['svc', 'reference'] as const) {
    it(`${target}: serves a certificate the list does not revoke and refuses the revoked one (gRPC and the JSON gateway)`, async () => {
      const put = (cert: string, key: string) =>
        etcdctl([`--endpoints=${urls[target]}`, `--cacert=${pki.caFile}`, `--cert=${cert}`, `--key=${key}`, '--dial-timeout=1s', '--command-timeout=2s', 'put', 'k', 'v'], { bin: ref35('etcdctl') });
      const ok = await put(pki.clientCertFile, pki.clientKeyFile);
      assert.equal(ok.stdout, 'OK\n', ok.stderr);
      assert.notEqual((await put(revoked.certFile, revoked.keyFile)).code, 0);
      assert.equal(await gatewayPut(urls[target], pki, pki.clientCertFile, pki.clientKeyFile), 200);
      await assert.rejects(gatewayPut(urls[target], pki, revoked.certFile, revoked.keyFile));
    });
  }
});

// The reference compares serial numbers only: its own test fixture (tests/fixtures/revoke.crl) passed its nextUpdate
// in 2021, and a valid certificate must still connect. It reads the file per connection, so a list replaced while
// the member runs applies to the next connection.
describe('an expired certificate revocation list, replaced while serving (side by side with the reference 3.5)', function () {
  this.timeout(90000);
  let dir: string;
  let pki: TestPki;
  let revoked: ReturnType<typeof revokeOne>;
  const procs: LoggedProcess[] = [];
  const urls = {} as Record<'svc' | 'reference', string>;
  const crlOf = (target: string) => join(dir, `${target}-list.pem`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-crl-expired-'));
    pki = makeTestPki(dir);
    revoked = revokeOne(pki);
    const expired = makeCrl(pki, 'expired', [revoked.certFile], -24 * 3600 * 1000);
    const ports = await freePorts(4);
    await Promise.all(
      TARGETS.map(async (target, i) => {
        copyFileSync(expired.pem, crlOf(target));
        const { proc, clientUrl: client } = spawnSingleMember(target, { dir, name: target, clientPort: ports[2 * i], peerPort: ports[2 * i + 1], scheme: 'https',
          flags: [`--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth', `--client-crl-file=${crlOf(target)}`] });
        procs.push(proc);
        await waitForHttp(`${client}/health`, { timeoutMs: 30000, ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: proc });
        urls[target] = client;
      }),
    );
  });

  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const target of ['svc', 'reference'] as const) {
    it(`${target}: a certificate the expired list does not revoke connects, the revoked one does not; a new list applies to the next connection`, async () => {
      const put = (cert: string, key: string) =>
        etcdctl([`--endpoints=${urls[target]}`, `--cacert=${pki.caFile}`, `--cert=${cert}`, `--key=${key}`, '--dial-timeout=1s', '--command-timeout=2s', 'put', 'k', 'v'], { bin: ref35('etcdctl') });
      const ok = await put(pki.clientCertFile, pki.clientKeyFile);
      assert.equal(ok.stdout, 'OK\n', ok.stderr);
      assert.notEqual((await put(revoked.certFile, revoked.keyFile)).code, 0);
      // now the list revokes the client certificate too
      copyFileSync(makeCrl(pki, `${target}-both`, [revoked.certFile, pki.clientCertFile]).pem, crlOf(target));
      const refused = await put(pki.clientCertFile, pki.clientKeyFile);
      assert.notEqual(refused.code, 0, refused.stdout);
    });
  }
});
