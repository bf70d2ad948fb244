// The test setup as a new user meets it: `npm test` in a fresh clone gets the reference binaries by itself
// (scripts/install-prereqs.sh, run as npm's "pretest"), or stops at once with one message naming the command.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const NOBODY = 65534;

interface Run {
  code: number;
  out: string;
}

function run(cmd: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, timeout: 120000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/** Every path below `dir` owned by `uid` (so an unprivileged npm can work in the clone). */
function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid);
    else if (!e.isSymbolicLink()) chownSync(p, uid, uid);
  }
}

describe('test setup: npm test on a fresh machine', function () {
  this.timeout(180000);
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-setup-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('with the reference installed, the setup step passes and names the reference release', async () => {
    const r = await run('bash', [join(REPO, 'scripts/install-prereqs.sh')], { cwd: REPO });
    expect(r.code, r.out).to.equal(0);
    expect(r.out).to.match(/\[prerequisites\] reference: etcd Version: 3\.4\.23; etcdctl version: 3\.4\.23/);
  });

  it('in a fresh clone with the reference binaries hidden and no root, npm test stops at once with one message', async () => {
    const clone = join(dir, 'clone');
    const git = await run('git', ['clone', '--quiet', REPO, clone]);
    expect(git.code, git.out).to.equal(0);
    const home = join(dir, 'home');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, npm_config_cache: join(home, '.npm') };
    let r: Run;
    if (process.getuid?.() === 0) {
      // As root: hide /usr/bin/etcd{,ctl} behind an empty, non-executable file in a private mount namespace,
      // and run npm as nobody, so the script sees what a user without root on a fresh machine sees.
      const empty = join(dir, 'empty');
      writeFileSync(empty, '');
      chmodSync(dir, 0o755);
      mkdirSync(home);
      chownTree(clone, NOBODY);
      chownSync(home, NOBODY, NOBODY);
      const inner = `mount --bind ${empty} /usr/bin/etcd && mount --bind ${empty} /usr/bin/etcdctl && exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups npm test`;
      r = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', inner], { cwd: clone, env });
    } else {
      // Without root the binaries cannot be hidden by a mount; pointing the tests elsewhere hides them as well.
      r = await run('npm', ['test'], { cwd: clone, env: { ...env, SVC_TEST_ETCD: join(dir, 'none', 'etcd'), SVC_TEST_ETCDCTL: join(dir, 'none', 'etcdctl') } });
    }
    expect(r.code, r.out).to.not.equal(0);
    const lines = r.out.split('\n').filter((l) => l.startsWith('[prerequisites] npm test needs the reference etcd 3.4.23'));
    expect(lines, r.out).to.have.length(1);
    expect(r.out).to.include('sudo bash scripts/install-prereqs.sh');
    // It stopped before building or running anything.
    expect(existsSync(join(clone, 'dist')), 'no build in the clone').to.equal(false);
    expect(r.out).to.not.match(/\d+ (passing|failing)/);
  });
});
