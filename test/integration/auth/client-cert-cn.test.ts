// With authentication on and --client-cert-auth, a request without a token is made as the user named by the
// client certificate's CommonName, as the reference does (its AuthInfoFromTLS). Side by side: the same steps
// against svc and the reference 3.4.23, with real certificates.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeClientCert, makeTestPki, type TestPki } from '../../../harness/tls.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ETCD_BIN } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';

describe('auth: user name from the client certificate (--client-cert-auth)', function () {
  this.timeout(180000);
  let dir: string;
  let pki: TestPki;
  const procs: LoggedProcess[] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cert-cn-'));
    pki = makeTestPki(dir, { clientCommonName: 'root' });
  });
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const target of ['svc', 'reference'] as const) {
    it(`${target}: a request without a token acts as the certificate's CommonName`, async () => {
      const [cp, pp] = await freePorts(2);
      const client = `https://127.0.0.1:${cp}`;
      const peer = `http://127.0.0.1:${pp}`;
      const flags = [`--name=m`, `--data-dir=${join(dir, `${target}.data`)}`, `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`, `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=m=${peer}`, `--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth'];
      const proc = target === 'svc'
        ? spawnSvc(flags, { logFile: join(dir, `${target}.log`), name: target, version: '3.4.34' })
        : spawnLogged(ETCD_BIN, flags, { logFile: join(dir, `${target}.log`), name: target });
      procs.push(proc);
      await waitForHttp(`${client}/health`, { timeoutMs: 30000, ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: proc });
      const alice = makeClientCert(pki, 'alice');
      const as = (cert: string, key: string) => (args: string[]) => etcdctl([`--endpoints=127.0.0.1:${cp}`, `--cacert=${pki.caFile}`, `--cert=${cert}`, `--key=${key}`, ...args]);
      const root = as(pki.clientCertFile, pki.clientKeyFile);
      const asAlice = as(alice.cert, alice.key);
      for (const args of [['user', 'add', 'root', '--new-user-password=rootpw'], ['user', 'grant-role', 'root', 'root'], ['user', 'add', 'alice', '--new-user-password=pw'], ['role', 'add', 'app'], ['role', 'grant-permission', 'app', 'readwrite', 'app/', '--prefix'], ['user', 'grant-role', 'alice', 'app'], ['auth', 'enable']]) {
        const r = await root(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
      }
      // no --user: root by its certificate
      const put = await root(['put', 'top', '1']);
      expect(put.stdout + put.stderr).to.equal('OK\n');
      expect((await root(['get', 'top', '--print-value-only'])).stdout).to.equal('1\n');
      expect((await root(['user', 'list'])).stdout).to.equal('alice\nroot\n');
      // alice by hers: her prefix only
      expect((await asAlice(['put', 'app/x', 'a'])).stdout).to.equal('OK\n');
      const denied = await asAlice(['put', 'top', '2']);
      expect(denied.code).to.not.equal(0);
      expect(denied.stderr).to.match(/permission denied/);
      // a token wins over the certificate
      const withToken = await asAlice(['--user=root:rootpw', 'put', 'top', '3']);
      expect(withToken.stdout, withToken.stderr).to.equal('OK\n');
    });
  }
});
