// --peer-cert-allowed-cn: a peer whose verified certificate names another common name is refused (it used
// to be parsed and ignored). Two members whose peer certificates carry the allowed CN form a cluster; a
// client certificate of the same CA with another CN cannot talk to the peer port.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestPki, type TestPki } from '../../../harness/tls.js';
import { freePorts } from '../../../harness/ports.js';
import { httpGet, type LoggedProcess } from '../../../harness/process.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';

/** HTTP status of a GET with this client certificate (rejects when the handshake fails). */
async function getWith(url: string, pki: TestPki, cert: string, key: string): Promise<number> {
  return (await httpGet(url, { ca: pki.ca, cert: readFileSync(cert), key: readFileSync(key) })).status;
}

describe('--peer-cert-allowed-cn (integration)', function () {
  this.timeout(90000);
  let dir: string;
  let pki: TestPki;
  const procs: LoggedProcess[] = [];
  let ports: number[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cn-'));
    pki = makeTestPki(dir, { clientCommonName: 'someone-else' });
    ports = await freePorts(4);
    const ic = `c0=https://127.0.0.1:${ports[1]},c1=https://127.0.0.1:${ports[3]}`;
    for (let i = 0; i < 2; i++) {
      const c = `http://127.0.0.1:${ports[2 * i]}`;
      const p = `https://127.0.0.1:${ports[2 * i + 1]}`;
      procs.push(
        spawnSvc(
          [
            `--name=c${i}`, `--data-dir=${join(dir, `c${i}`)}`, `--listen-client-urls=${c}`, `--advertise-client-urls=${c}`,
            `--listen-peer-urls=${p}`, `--initial-advertise-peer-urls=${p}`, `--initial-cluster=${ic}`,
            `--peer-cert-file=${pki.serverCertFile}`, `--peer-key-file=${pki.serverKeyFile}`, `--peer-trusted-ca-file=${pki.caFile}`,
            '--peer-client-cert-auth', '--peer-cert-allowed-cn=svc test server',
          ],
          { logFile: join(dir, `c${i}.log`), name: `c${i}` },
        ),
      );
    }
  });

  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  });

  it('members whose certificates carry the allowed CN form a cluster', async () => {
    const deadline = Date.now() + 30000;
    for (;;) {
      const a = await httpGet(`http://127.0.0.1:${ports[0]}/health`).catch(() => ({ status: 0 }));
      const b = await httpGet(`http://127.0.0.1:${ports[2]}/health`).catch(() => ({ status: 0 }));
      if (a.status === 200 && b.status === 200) break;
      assert.ok(Date.now() < deadline, 'the two members did not become healthy');
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it('a certificate of the same CA with another CN is refused on the peer port', async () => {
    assert.equal(await getWith(`https://127.0.0.1:${ports[1]}/version`, pki, pki.serverCertFile, pki.serverKeyFile), 200);
    await assert.rejects(getWith(`https://127.0.0.1:${ports[1]}/version`, pki, pki.clientCertFile, pki.clientKeyFile));
  });
});
