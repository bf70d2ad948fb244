// The krew package of `kubectl svc` (scripts/krew-package.sh): the archive it builds is the one its manifest names
// (sha256, and the release's URL pattern with the package's version), the repository's manifest is that manifest but
// for the sha256 (a release writes its own), and the plugin runs from the archive unpacked as krew installs it
// (files kubectl-svc/* to the install dir, bin bin/kubectl-svc), with nothing of the repository on its way.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { KUBE_ONCALL_USAGE } from '../../../operator/cli/oncall-kube.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

interface Manifest { spec: { version: string; platforms: Array<{ uri: string; sha256: string; bin: string; files: Array<{ from: string; to: string }> }> } }

describe('operator: the krew package of kubectl svc', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-krew-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the manifest names the archive built (sha256, release URL); the plugin runs from it unpacked as krew installs it', () => {
    const manifestFile = join(dir, 'svc.yaml');
    // dist/ is built already (npm test builds first)
    const r = spawnSync('bash', [join(ROOT, 'scripts', 'krew-package.sh'), join(dir, 'out')], { encoding: 'utf8', env: { ...process.env, KREW_BUILD: '0', KREW_MANIFEST: manifestFile } });
    expect(r.status, r.stderr).to.equal(0);
    const version = `v${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
    const archives = readdirSync(join(dir, 'out')).filter((f) => f.endsWith('.tar.gz'));
    expect(archives).to.deep.equal([`kubectl-svc-${version}.tar.gz`]);
    const archive = join(dir, 'out', archives[0]);
    const m = load(readFileSync(manifestFile, 'utf8')) as Manifest;
    expect(m.spec.version).to.equal(version);
    const [p] = m.spec.platforms;
    expect(p.sha256).to.equal(createHash('sha256').update(readFileSync(archive)).digest('hex'));
    expect(p.uri).to.equal(`https://github.com/svc-dev/svc/releases/download/${version}/${archives[0]}`);

    // the repository's manifest is the script's, but for the sha256 of the archive built when it was written
    const repo = load(readFileSync(join(ROOT, 'plugins', 'svc.yaml'), 'utf8')) as Manifest;
    expect(repo.spec.platforms[0].sha256).to.match(/^[0-9a-f]{64}$/).and.not.match(/^0+$/);
    expect({ ...repo, spec: { ...repo.spec, platforms: repo.spec.platforms.map((x) => ({ ...x, sha256: p.sha256 })) } }, 'run `bash scripts/krew-package.sh` and commit plugins/svc.yaml').to.deep.equal(m);

    // krew: the archive unpacked, `files` moved to the install dir, `bin` run (Node on PATH, nothing else)
    const unpacked = join(dir, 'unpacked');
    const install = join(dir, 'install');
    mkdirSync(unpacked);
    mkdirSync(install);
    const x = spawnSync('tar', ['-xzf', archive, '-C', unpacked], { encoding: 'utf8' });
    expect(x.status, x.stderr).to.equal(0);
    expect(p.files).to.deep.equal([{ from: 'kubectl-svc/*', to: '.' }]);
    for (const f of readdirSync(join(unpacked, 'kubectl-svc'))) renameSync(join(unpacked, 'kubectl-svc', f), join(install, f));
    const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir };
    const help = spawnSync(join(install, p.bin), ['--help'], { encoding: 'utf8', env, cwd: dir });
    expect(help.status, help.stderr).to.equal(0);
    for (const verb of ['status', 'backup', 'recover', ...Object.keys(KUBE_ONCALL_USAGE)]) expect(help.stdout).to.contain(`kubectl svc ${verb} `);
    // a command that reaches for a cluster: the Kubernetes client loads, and says what is missing
    const run = spawnSync(join(install, p.bin), ['alarm', 'list', 'kv', '--kubeconfig', join(dir, 'none')], { encoding: 'utf8', env, cwd: dir });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain(`kubeconfig ${join(dir, 'none')} does not exist`);
  });
});
