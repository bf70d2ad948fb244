// --auto-tls / --peer-auto-tls with --self-signed-cert-validity: each member generates self-signed
// certificates at start into <data-dir>/fixtures/client and <data-dir>/fixtures/peer, serves clients and
// peers over TLS with them, and a client that skips verification (etcdctl --insecure-skip-tls-verify)
// works against the cluster; a member added later with --peer-auto-tls joins (it fetches the cluster's members
// from the peers without verifying their self-signed certificates, as the reference).
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import type * as grpc from '@grpc/grpc-js';
import { Connection } from '../../../server/client/connection.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, type LoggedProcess } from '../../../harness/process.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { useTempDir } from '../../../harness/temp-dir.js';

type KvStub = {
  Put(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void;
  Range(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: { kvs: Array<{ value: Buffer }> }) => void): void;
};

/** The status of one GET; https accepts the self-signed certificates. */
async function statusOf(url: string): Promise<number> {
  return (await httpGet(url, { insecure: true })).status;
}

/** The certificate a TLS server presents, PEM-free: its raw DER. */
function presentedCert(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate().raw);
      s.end();
    });
    s.on('error', reject);
  });
}

function derOf(pemFile: string): Buffer {
  return Buffer.from(readFileSync(pemFile, 'utf8').replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

describe('--auto-tls and --peer-auto-tls (integration)', function () {
  this.timeout(120000);
  const procs: LoggedProcess[] = [];
  const ports: Array<{ client: number; peer: number }> = [];
  // Registered before the temp dir's own hook: the members stop before their data dirs go.
  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL', 5000)));
  });
  const tmp = useTempDir('svc-autotls-');

  before(async () => {
    const ps = await freePorts(6);
    for (let i = 0; i < 3; i++) ports.push({ client: ps[2 * i], peer: ps[2 * i + 1] });
    const ic = ports.map((p, i) => `a${i}=https://127.0.0.1:${p.peer}`).join(',');
    for (let i = 0; i < 3; i++) {
      const c = `https://127.0.0.1:${ports[i].client}`;
      const p = `https://127.0.0.1:${ports[i].peer}`;
      procs.push(
        spawnSvc(
          [
            `--name=a${i}`,
            `--data-dir=${join(tmp.path, `a${i}`)}`,
            `--listen-client-urls=${c}`,
            `--advertise-client-urls=${c}`,
            `--listen-peer-urls=${p}`,
            `--initial-advertise-peer-urls=${p}`,
            `--initial-cluster=${ic}`,
            '--auto-tls',
            '--peer-auto-tls',
            '--self-signed-cert-validity=2',
          ],
          { logFile: join(tmp.path, `a${i}.log`), name: `a${i}` },
        ),
      );
    }
    await Promise.all(procs.map((p) => p.waitForLog(/serving client traffic securely/, 60000)));
  });

  it('generates the certificates under <data-dir>/fixtures with the requested validity', () => {
    for (let i = 0; i < 3; i++) {
      for (const kind of ['client', 'peer']) {
        const cert = join(tmp.path, `a${i}`, 'fixtures', kind, 'cert.pem');
        assert.ok(existsSync(cert) && existsSync(join(tmp.path, `a${i}`, 'fixtures', kind, 'key.pem')), `${cert} missing`);
        const text = execFileSync('openssl', ['x509', '-in', cert, '-noout', '-enddate', '-text'], { encoding: 'utf8' });
        const end = new Date(/notAfter=(.*)/.exec(text)![1]).getTime();
        const years = (end - Date.now()) / (365 * 24 * 3600 * 1000);
        assert.ok(years > 1.9 && years < 2.1, `validity of ${cert}: ${years} years`);
        assert.match(text, /IP Address:127\.0\.0\.1/);
      }
    }
  });

  it('a client that skips verification writes through one member and reads through another', async () => {
    const c0 = new Connection(`https://127.0.0.1:${ports[0].client}`, { insecureSkipVerify: true });
    const c2 = new Connection(`https://127.0.0.1:${ports[2].client}`, { insecureSkipVerify: true });
    try {
      const kv0 = c0.stub('KV') as unknown as KvStub;
      const kv2 = c2.stub('KV') as unknown as KvStub;
      await new Promise<void>((resolve, reject) => kv0.Put({ key: Buffer.from('auto'), value: Buffer.from('tls') }, { deadline: Date.now() + 5000 }, (e) => (e ? reject(e) : resolve())));
      const res = await new Promise<{ kvs: Array<{ value: Buffer }> }>((resolve, reject) =>
        kv2.Range({ key: Buffer.from('auto') }, { deadline: Date.now() + 5000 }, (e, r) => (e ? reject(e) : resolve(r))),
      );
      assert.equal(res.kvs[0]?.value.toString(), 'tls');
      assert.equal(await statusOf(`https://127.0.0.1:${ports[1].client}/health`), 200);
    } finally {
      c0.close();
      c2.close();
    }
  });

  it('a member added (a learner) with --peer-auto-tls joins: the peers\' self-signed certificates are not verified', async () => {
    const [client, peer] = await freePorts(2);
    const c = `https://127.0.0.1:${client}`;
    const p = `https://127.0.0.1:${peer}`;
    const conn = new Connection(`https://127.0.0.1:${ports[0].client}`, { insecureSkipVerify: true });
    try {
      const cluster = conn.stub('Cluster') as unknown as { MemberAdd(req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void };
      const add = () => new Promise<grpc.ServiceError | null>((resolve) => cluster.MemberAdd({ peerURLs: [p], isLearner: true }, { deadline: Date.now() + 5000 }, resolve));
      // Refused as an unhealthy cluster until the members have been connected for 5 s (strict reconfiguration).
      let err = await add();
      for (let i = 0; i < 40 && err?.details === 'etcdserver: unhealthy cluster'; i++) {
        await new Promise((r) => setTimeout(r, 250));
        err = await add();
      }
      assert.equal(err, null);
    } finally {
      conn.close();
    }
    const ic = [...ports.map((x, i) => `a${i}=https://127.0.0.1:${x.peer}`), `a3=${p}`].join(',');
    const args = [`--name=a3`, `--data-dir=${join(tmp.path, 'a3')}`, `--listen-client-urls=${c}`, `--advertise-client-urls=${c}`, `--listen-peer-urls=${p}`, `--initial-advertise-peer-urls=${p}`];
    const joiner = spawnSvc([...args, `--initial-cluster=${ic}`, '--initial-cluster-state=existing', '--auto-tls', '--peer-auto-tls'], { logFile: join(tmp.path, 'a3.log'), name: 'a3' });
    procs.push(joiner);
    await joiner.waitForLog(/serving client traffic securely/, 30000);
    assert.equal(await statusOf(`${c}/health`), 200);
  });

  it('client and peer ports speak only TLS, with the generated certificates', async () => {
    await assert.rejects(statusOf(`http://127.0.0.1:${ports[0].peer}/version`));
    assert.equal(await statusOf(`https://127.0.0.1:${ports[0].peer}/version`), 200);
    assert.deepEqual(await presentedCert(ports[1].peer), derOf(join(tmp.path, 'a1', 'fixtures', 'peer', 'cert.pem')));
    assert.deepEqual(await presentedCert(ports[1].client), derOf(join(tmp.path, 'a1', 'fixtures', 'client', 'cert.pem')));
  });
});
