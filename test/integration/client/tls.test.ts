// TLS from the client library and svcctl, against a single reference member serving https with client
// certificate authentication.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client, ClientError } from '../../../server/client/index.js';
import { makeTestPki, type TestPki } from '../../../harness/tls.js';
import { freePorts } from '../../../harness/ports.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { ETCD_BIN } from '../../../harness/reference-cluster.js';
import { svcctl } from '../svcctl/run-svcctl.js';

describe('client and svcctl over TLS (reference member)', function () {
  this.timeout(60000);
  let dir: string;
  let pki: TestPki;
  let member: LoggedProcess;
  let endpoint: string;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'svc-client-tls-'));
    mkdirSync(join(dir, 'pki'));
    pki = makeTestPki(join(dir, 'pki'), { clientCommonName: 'tester' });
    const [c, p] = await freePorts(2);
    endpoint = `https://127.0.0.1:${c}`;
    member = spawnLogged(ETCD_BIN, [
      '--name=tls0', `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${endpoint}`, `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=http://127.0.0.1:${p}`, `--initial-advertise-peer-urls=http://127.0.0.1:${p}`,
      `--initial-cluster=tls0=http://127.0.0.1:${p}`,
      `--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth',
    ], { logFile: join(dir, 'etcd.log'), name: 'tls0' });
    await waitForHttp(`${endpoint}/health`, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: member });
  });

  after(async function () {
    await member?.stop('SIGTERM', 5000);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('connects with a CA and a client certificate, from files or contents', async function () {
    const c = await Client.connect({ endpoints: [endpoint], waitForConnection: true, tls: { ca: pki.caFile, cert: pki.clientCertFile, key: pki.clientKeyFile } });
    try {
      await c.put('tls/a', '1');
    } finally {
      c.close();
    }
    const c2 = await Client.connect({ endpoints: [endpoint.replace('https://', '')], waitForConnection: true, tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey } });
    try {
      expect((await c2.get('tls/a')).kvs[0].value.toString()).to.equal('1');
    } finally {
      c2.close();
    }
  });

  it('accepts an unknown server certificate only with insecureSkipVerify', async function () {
    const bad = await Client.connect({ endpoints: [endpoint], waitForConnection: true, dialTimeoutMs: 1500, tls: { cert: pki.clientCert, key: pki.clientKey } }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(ClientError);
    const c = await Client.connect({ endpoints: [endpoint], waitForConnection: true, tls: { cert: pki.clientCert, key: pki.clientKey, insecureSkipVerify: true } });
    try {
      expect((await c.get('tls/a')).count).to.equal('1');
    } finally {
      c.close();
    }
  });

  it('svcctl takes --cacert/--cert/--key', async function () {
    const tls = [`--endpoints=${endpoint}`, `--cacert=${pki.caFile}`, `--cert=${pki.clientCertFile}`, `--key=${pki.clientKeyFile}`];
    expect((await svcctl([...tls, 'put', 'tls/b', '2'])).stdout).to.equal('OK\n');
    expect((await svcctl([...tls, 'get', 'tls/b'])).stdout).to.equal('tls/b\n2\n');
    const h = await svcctl([...tls, 'endpoint', 'health']);
    expect(h.stderr).to.match(/is healthy: successfully committed proposal/);
  });
});
