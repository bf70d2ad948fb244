// --client-crl-file and --peer-crl-file refuse certificates the list revokes (they used to be parsed and
// ignored: a revoked client certificate still connected). The PKI and the CRL are made with openssl here. A CRL in
// DER form (which the reference reads as well as PEM) is tried side by side with the reference 3.5.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { makeTestPki, type TestPki } from '../../../harness/tls.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A second client certificate of the test CA ("revoked.pem"), revoked in crl.pem. */
function revokeOne(pki: TestPki): { certFile: string; keyFile: string; crlFile: string } {
  const d = pki.dir;
  writeFileSync(join(d, 'revoked.ext'), 'extendedKeyUsage=clientAuth,serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'revoked-key.pem', '-out', 'revoked.csr', '-subj', '/CN=revoked'], d);
  openssl(['x509', '-req', '-in', 'revoked.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'revoked.pem', '-days', '2', '-extfile', 'revoked.ext'], d);
  writeFileSync(join(d, 'index.txt'), '');
  writeFileSync(join(d, 'crlnumber'), '01\n');
  writeFileSync(join(d, 'ca.cnf'), '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\ncrlnumber=crlnumber\ndefault_md=sha256\ndefault_crl_days=30\n');
  openssl(['ca', '-config', 'ca.cnf', '-keyfile', 'ca-key.pem', '-cert', 'ca.pem', '-revoke', 'revoked.pem'], d);
  openssl(['ca', '-config', 'ca.cnf', '-keyfile', 'ca-key.pem', '-cert', 'ca.pem', '-gencrl', '-out', 'crl.pem'], d);
  return { certFile: join(d, 'revoked.pem'), keyFile: join(d, 'revoked-key.pem'), crlFile: join(d, 'crl.pem') };
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
    openssl(['crl', '-in', 'crl.pem', '-outform', 'DER', '-out', 'crl.der'], dir);
    const ports = await freePorts(4);
    await Promise.all(
      (['svc', 'reference'] as const).map(async (target, i) => {
        const client = `https://127.0.0.1:${ports[2 * i]}`;
        const peer = `http://127.0.0.1:${ports[2 * i + 1]}`;
        const dataDir = join(dir, `${target}.data`);
        mkdirSync(dataDir, { mode: 0o700 });
        const flags = ['--name=m', `--data-dir=${dataDir}`, `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`, `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=m=${peer}`, `--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth', `--client-crl-file=${join(dir, 'crl.der')}`];
        const proc = target === 'svc' ? spawnSvc(flags, { logFile: join(dir, 'svc.log'), name: target }) : spawnLogged(ref35('etcd'), flags, { logFile: join(dir, 'reference.log'), name: target });
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
