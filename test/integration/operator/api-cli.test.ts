// SvcCluster validation and the svc-operator command line's usage errors and exit codes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { parseSvcCluster, specProblems, updateProblems, ValidationError } from '../../../operator/api/validate.js';

const MAIN = pathToFileURL(fileURLToPath(new URL('../../../operator/cli/main.js', import.meta.url))).href;

function cli(args: string[], cwd: string): { status: number | null; out: string } {
  const script = `import(${JSON.stringify(MAIN)}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  const r = spawnSync(process.execPath, ['-e', script, '--', ...args], { cwd, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('operator/api: SvcCluster validation', () => {
  it('accepts a minimal manifest and fills defaults', () => {
    const c = parseSvcCluster({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'a' }, spec: { version: '3.4.34', replicas: 3 } });
    expect(c.spec.replicas).to.equal(3);
    expect(c.spec.upgrade).to.deep.equal({ paused: false, waitBetweenMembersSeconds: 0, acknowledgeLargeV2Data: false });
    expect(c.spec.backup?.keep).to.equal(3);
  });

  it('lists every problem of a bad manifest', () => {
    try {
      parseSvcCluster({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { version: '3.8.0', replicas: 4, upgrade: { paused: 'yes' } } });
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ValidationError);
      const p = (e as ValidationError).problems.join('\n');
      for (const re of [/apiVersion/, /kind/, /metadata.name/, /supported release line/, /odd integer from 1 to 7/, /paused must be a boolean/]) expect(p).to.match(re);
    }
    expect(specProblems({ version: 'x' })).to.deep.equal(['spec.version must be "<major>.<minor>.<patch>"']);
    expect(updateProblems({ version: '3.4.34', replicas: 3, storage: { storageClassName: 'a' } }, { version: '3.4.34', replicas: 3, storage: { storageClassName: 'b' } })).to.have.length(1);
  });
});

describe('operator/cli: exit codes', function () {
  this.timeout(30_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-op-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 2 on usage errors and 1 on failures, with a clear message', () => {
    expect(cli(['frobnicate'], dir)).to.include({ status: 2 });
    expect(cli(['local', 'apply'], dir).out).to.match(/local apply needs -f/);
    expect(cli(['local', 'apply', '-f', join(dir, 'missing.yaml')], dir).status).to.equal(2);
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: svc.dev/v1alpha1\nkind: SvcCluster\nmetadata: {name: x}\nspec: {version: "3.3.27", replicas: 2}\n');
    const bad = cli(['local', 'apply', '-f', join(dir, 'bad.yaml'), '--state-dir', join(dir, 'st')], dir);
    expect(bad.status).to.equal(1);
    expect(bad.out).to.match(/spec.replicas must be an odd integer/);
    const none = cli(['local', 'status', '--state-dir', join(dir, 'st')], dir);
    expect(none.status).to.equal(1);
    expect(none.out).to.match(/no local cluster in/);
    const noBackup = cli(['local', 'backup', '--wait', '--state-dir', join(dir, 'st')], dir);
    expect(noBackup.status).to.equal(1);
    expect(noBackup.out).to.match(/no local cluster in .*; create one with `svc-operator local apply -f <cluster.yaml>/);
    expect(cli(['local', 'status', '--wait'], dir)).to.include({ status: 2 });
    expect(cli(['--help'], dir)).to.include({ status: 0 });
  });

  it('local apply refuses a spec its release cannot run, and unknown fields by path, before anything is made', () => {
    const st = join(dir, 'refused');
    writeFileSync(join(dir, 'old-logger.yaml'), 'apiVersion: svc.dev/v1alpha1\nkind: SvcCluster\nmetadata: {name: x}\nspec: {version: "3.3.27", replicas: 1, logging: {logger: capnslog}}\n');
    const logger = cli(['local', 'apply', '-f', join(dir, 'old-logger.yaml'), '--state-dir', st], dir);
    expect(logger.status).to.equal(1);
    // the same text the controller sets as InvalidSpec (specProblems)
    const why = specProblems({ version: '3.3.27', replicas: 1, logging: { logger: 'capnslog' } });
    expect(why).to.deep.equal(['spec.logging.logger: release 3.3.27 has no --logger flag; remove spec.logging.logger, or set spec.version to a release that has it (3.4, 3.5, 3.6, 3.7)']);
    expect(logger.out).to.contain(why[0]);
    expect(existsSync(st), 'nothing created').to.equal(false);
    writeFileSync(join(dir, 'typo.yaml'), 'apiVersion: svc.dev/v1alpha1\nkind: SvcCluster\nmetadata: {name: x}\nspec: {version: "3.5.21", replicas: 1, maintenence: {window: sun}, logging: {levl: info}}\n');
    const typo = cli(['local', 'apply', '-f', join(dir, 'typo.yaml'), '--state-dir', st], dir);
    expect(typo.status).to.equal(1);
    expect(typo.out).to.contain('spec.maintenence: unknown field').and.to.contain('spec.logging.levl: unknown field');
    expect(existsSync(st), 'nothing created').to.equal(false);
  });

  it('--help lists every command; status explains a missing kubeconfig with exit status 1', () => {
    const help = cli(['--help'], dir).out;
    for (const c of ['svc-operator status <cluster>', 'svc-operator run', 'svc-operator crd', 'svc-operator backup', 'svc-operator restore',
      'svc-operator local apply', 'svc-operator local status', 'svc-operator local backup', 'svc-operator local delete', 'svc-operator demo', 'svc-operator backup-now <cluster>']) expect(help, c).to.contain(c);
    const script = `import(${JSON.stringify(MAIN)}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
    const env = { ...process.env, HOME: dir, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' };
    const r = spawnSync(process.execPath, ['-e', script, '--', 'status', 'kv'], { cwd: dir, encoding: 'utf8', env });
    expect(r.status).to.equal(1);
    expect(r.stderr).to.equal('svc-operator: no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config\n');
    const usage = cli(['status'], dir);
    expect(usage.status).to.equal(2);
    expect(usage.out).to.match(/status needs the name of an SvcCluster/);
  });

  it('the kubectl plugin: kubectl svc --help names status and backup; a backup without a cluster is a usage error (2)', () => {
    const plugin = fileURLToPath(new URL('../../../../bin/kubectl-svc', import.meta.url));
    const help = spawnSync(process.execPath, [plugin, '--help'], { cwd: dir, encoding: 'utf8' });
    expect(help.status).to.equal(0);
    expect(help.stdout).to.contain('kubectl svc status <cluster>').and.to.contain('kubectl svc backup <cluster>');
    const bad = spawnSync(process.execPath, [plugin, 'backup'], { cwd: dir, encoding: 'utf8' });
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.match(/^kubectl svc: kubectl svc backup needs exactly one SvcCluster name\nusage: kubectl svc backup <cluster>/);
  });
});
