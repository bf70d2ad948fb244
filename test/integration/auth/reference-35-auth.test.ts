// Authentication holes of issue 29 (items 3-5), side by side with the reference 3.5: the same commands through the
// reference's etcdctl 3.5 against svc and against the reference etcd 3.5, over TLS with --client-cert-auth, and
// the same answers (exit status, output, error texts) from both.
//  - LeaseTimeToLive with keys: permission denied unless the user may read every attached key;
//  - a user may `user get` itself and `role get` a role it holds (and nothing else);
//  - a user named by the certificate's CommonName, added with `user add <CN> --interactive=false` (an empty
//    password read from standard input) or with a password, acts by its certificate.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeClientCert, makeTestPki, type TestPki } from '../../../harness/tls.js';
import { etcdctl, type EtcdctlResult } from '../../../harness/etcdctl.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';

type Target = 'svc' | 'reference';
type Raw = (cn: string, args: string[], input?: string) => Promise<EtcdctlResult>;
type Ctl = (cn: string, args: string[], input?: string) => Promise<string>;

/**
 * "<exit status>: <output>", without the client's JSON warning lines, lease ids and remaining seconds, and with a
 * lease's attached keys sorted (the reference lists them in no set order).
 */
function normalized(r: { code: number; stdout: string; stderr: string }): string {
  const out = `${r.stdout}${r.stderr}`
    .split('\n')
    .filter((l) => !l.startsWith('{"level"'))
    .join('\n')
    .replace(/\b[0-9a-f]{16}\b/g, '<lease>')
    .replace(/remaining\(\d+s\)/g, 'remaining(<n>s)')
    .replace(/attached keys\(\[(.*)\]\)/g, (_m, keys: string) => `attached keys([${keys.split(' ').sort().join(' ')}])`);
  return `${r.code}: ${out.trim()}`;
}

describe('auth: lease keys, own user and roles, certificate users (side by side with the reference 3.5)', function () {
  this.timeout(120000);
  let dir: string;
  let pki: TestPki;
  const procs: LoggedProcess[] = [];
  const raw = {} as Record<Target, Raw>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-auth35-'));
    pki = makeTestPki(dir, { clientCommonName: 'root' });
    const certs: Record<string, { cert: string; key: string }> = {
      root: { cert: pki.clientCertFile, key: pki.clientKeyFile },
      alice: makeClientCert(pki, 'alice'),
      bob: makeClientCert(pki, 'bob'),
    };
    const ports = await freePorts(4);
    await Promise.all(
      (['svc', 'reference'] as const).map(async (target, i) => {
        const client = `https://127.0.0.1:${ports[2 * i]}`;
        const peer = `http://127.0.0.1:${ports[2 * i + 1]}`;
        const dataDir = join(dir, `${target}.data`);
        mkdirSync(dataDir, { mode: 0o700 });
        const flags = [`--name=m`, `--data-dir=${dataDir}`, `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`, `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=m=${peer}`, `--cert-file=${pki.serverCertFile}`, `--key-file=${pki.serverKeyFile}`, `--trusted-ca-file=${pki.caFile}`, '--client-cert-auth'];
        const proc = target === 'svc' ? spawnSvc(flags, { logFile: join(dir, 'svc.log'), name: target }) : spawnLogged(ref35('etcd'), flags, { logFile: join(dir, 'reference.log'), name: target });
        procs.push(proc);
        await waitForHttp(`${client}/health`, { timeoutMs: 30000, ca: pki.ca, cert: pki.clientCert, key: pki.clientKey, process: proc });
        raw[target] = (cn, args, input) =>
          etcdctl([`--endpoints=127.0.0.1:${ports[2 * i]}`, `--cacert=${pki.caFile}`, `--cert=${certs[cn].cert}`, `--key=${certs[cn].key}`, ...args], { bin: ref35('etcdctl'), input });
      }),
    );
  });
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the steps against both (in turn, each target's steps in order) and expects the same answers. */
  async function sideBySide(steps: (run: Ctl, target: Target) => Promise<string[]>): Promise<string[]> {
    const run = (target: Target): Ctl => async (cn, args, input) => normalized(await raw[target](cn, args, input));
    const svc = await steps(run('svc'), 'svc');
    const reference = await steps(run('reference'), 'reference');
    expect(svc).to.deep.equal(reference);
    return reference;
  }

  it('users by certificate: added without a password (--interactive=false) and with one', async () => {
    const answers = await sideBySide(async (run) => [
      await run('root', ['user', 'add', 'root', '--new-user-password=rootpw']),
      await run('root', ['user', 'grant-role', 'root', 'root']),
      // --interactive=false reads the password from standard input: empty for alice, "bobpw" for bob
      await run('root', ['user', 'add', 'alice', '--interactive=false'], ''),
      await run('root', ['user', 'add', 'bob', '--interactive=false'], 'bobpw\n'),
      await run('root', ['role', 'add', 'app']),
      await run('root', ['role', 'add', 'other']),
      await run('root', ['role', 'grant-permission', 'app', 'readwrite', 'app/', '--prefix']),
      await run('root', ['user', 'grant-role', 'alice', 'app']),
      await run('root', ['user', 'grant-role', 'bob', 'app']),
      await run('root', ['auth', 'enable']),
      await run('alice', ['put', 'app/a', '1']),
      await run('alice', ['get', 'app/a', '--print-value-only']),
      await run('bob', ['put', 'app/b', '2']),
      await run('bob', ['put', 'top', '2']),
      await run('root', ['--user=bob:bobpw', 'put', 'app/c', '3']),
    ]);
    expect(answers.slice(2, 4)).to.deep.equal(['0: User alice created', '0: User bob created']);
    expect(answers.slice(10)).to.deep.equal(['0: OK', '0: 1', '0: OK', '1: Error: etcdserver: permission denied', '0: OK']);
  });

  it('LeaseTimeToLive with keys: refused unless the user may read every attached key', async () => {
    const answers = await sideBySide(async (run, target) => {
      const grant = async () => /lease ([0-9a-f]{16}) granted/.exec((await raw[target]('root', ['lease', 'grant', '100'])).stdout)?.[1] ?? 'none';
      const [mixed, own] = [await grant(), await grant()];
      return [
        await run('root', ['put', 'secret', 's', `--lease=${mixed}`]),
        await run('root', ['put', 'app/l1', 'v', `--lease=${mixed}`]),
        await run('root', ['put', 'app/l2', 'v', `--lease=${own}`]),
        await run('bob', ['lease', 'timetolive', mixed, '--keys']),
        await run('bob', ['lease', 'timetolive', mixed]),
        await run('bob', ['lease', 'timetolive', own, '--keys']),
        await run('root', ['lease', 'timetolive', mixed, '--keys']),
        await run('bob', ['lease', 'timetolive', '1234', '--keys']),
      ];
    });
    expect(answers[3]).to.match(/^[1-9]: Error: etcdserver: permission denied$/);
    expect(answers[5]).to.equal('0: lease <lease> granted with TTL(100s), remaining(<n>s), attached keys([app/l2])');
  });

  it('a user reads itself and the roles it holds, and no other user or role', async () => {
    const answers = await sideBySide(async (run) => [
      await run('bob', ['user', 'get', 'bob']),
      await run('bob', ['user', 'get', 'bob', '--detail']),
      await run('bob', ['role', 'get', 'app']),
      await run('bob', ['user', 'get', 'alice']),
      await run('bob', ['role', 'get', 'other']),
      await run('bob', ['role', 'get', 'root']),
      await run('bob', ['user', 'get', 'nobody']),
      await run('bob', ['user', 'list']),
    ]);
    expect(answers[0]).to.equal('0: User: bob\nRoles: app');
    for (const a of answers.slice(3)) expect(a).to.match(/^[1-9]: Error: etcdserver: permission denied$/);
  });
});
