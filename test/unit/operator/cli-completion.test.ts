// Shell completion generated from the command tables (completions/ holds the same), checked by running bash's
// completion function on command lines; the krew manifest names the plugin, its version and binary.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { bashCompletion, zshCompletion } from '../../../operator/cli/completion.js';
import { ONCALL_VERBS } from '../../../operator/cli/oncall.js';
import { repoRoot } from '../../k8s/binaries.js';

const ROOT = repoRoot();

/** What bash completes for `words` (the last one being typed). */
function complete(fn: string, words: string[]): string[] {
  const script = `source ${JSON.stringify(join(ROOT, 'completions', 'svc-operator.bash'))}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).to.equal(0);
  return r.stdout.split('\n').filter(Boolean);
}

describe('operator/cli: shell completion and the krew manifest', () => {
  it('completions/ is what `svc-operator completion bash|zsh` prints', () => {
    expect(readFileSync(join(ROOT, 'completions', 'svc-operator.bash'), 'utf8'), 'run `svc-operator completion bash > completions/svc-operator.bash`').to.equal(bashCompletion());
    expect(readFileSync(join(ROOT, 'completions', '_svc-operator'), 'utf8'), 'run `svc-operator completion zsh > completions/_svc-operator`').to.equal(zshCompletion());
  });

  it('bash completes commands, every on-call verb, sub-verbs and flags', () => {
    expect(complete('_svc_operator', ['svc-operator', 'lo'])).to.deep.equal(['local']);
    const verbs = complete('_svc_operator', ['svc-operator', 'local', '']);
    for (const v of ONCALL_VERBS) expect(verbs).to.include(v.name);
    expect(complete('_svc_operator', ['svc-operator', 'local', 'alarm', ''])).to.include.members(['list', 'disarm', '--dry-run']);
    expect(complete('_svc_operator', ['svc-operator', 'local', 'move-leader', 'oc', '--t'])).to.deep.equal(['--to']);
    expect(complete('_svc_operator', ['svc-operator', 'local', 'ru'])).to.deep.equal(['run']);
    expect(complete('_svc_operator', ['svc-operator', 'local', 'run', '--'])).to.deep.equal(['--listen', '--dry-run', '--state-dir']);
    expect(complete('_kubectl_svc', ['kubectl-svc', ''])).to.include.members(['status', 'backup', 'recover', 'suspend', 'resume', 'report']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'suspend', 'kv', '--d'])).to.deep.equal(['--dry-run']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'back'])).to.deep.equal(['backup', 'backups']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'backups', 'kv', '--o'])).to.deep.equal(['--output']);
    expect(complete('_kubectl_svc', ['kubectl-svc', ''])).to.include.members(['move-leader', 'restart', 'alarm', 'defrag', 'compact']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'alarm', ''])).to.include.members(['list', 'disarm', '--dry-run', '--namespace', '--kubeconfig']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'move-leader', 'kv', '--t'])).to.deep.equal(['--to']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'restart', 'kv', '--d'])).to.deep.equal(['--dry-run']);
    expect(complete('_kubectl_svc', ['kubectl-svc', 'report', 'kv', '--'])).to.include('--file').and.include('--dry-run');
    // svc-operator's own names of the plugin's backup and verify
    expect(complete('_svc_operator', ['svc-operator', 'backup-now', 'kv', '--t'])).to.deep.equal(['--token']);
    expect(complete('_svc_operator', ['svc-operator', 'verify-now', 'kv', '--w'])).to.deep.equal(['--wait']);
  });

  it('the krew manifest: plugin svc, the package\'s version, binary kubectl-svc', () => {
    const m = load(readFileSync(join(ROOT, 'plugins', 'svc.yaml'), 'utf8')) as { kind: string; metadata: { name: string }; spec: { version: string; platforms: Array<{ bin: string; uri: string }> } };
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(m.kind).to.equal('Plugin');
    expect(m.metadata.name).to.equal('svc');
    expect(m.spec.version).to.equal(`v${pkg.version}`);
    for (const p of m.spec.platforms) {
      expect(p.bin).to.equal('bin/kubectl-svc');
      expect(p.uri).to.contain(`v${pkg.version}`);
    }
    expect(pkg.bin['kubectl-svc'] ?? readFileSync(join(ROOT, 'bin', 'kubectl-svc'), 'utf8')).to.be.a('string');
  });
});
