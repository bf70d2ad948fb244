// The operator's watch scope flags (cli/kube.ts, for controller/scope.ts): `--namespaces` and `--cluster-selector`, as `svc-operator run`
// parses them; the k8s tier (operator-packaging.test.ts) runs two shards on the real apiserver.
import { expect } from 'chai';
import { kubeMain, parseClusterSelector, parseNamespaces } from '../../../operator/cli/kube.js';

describe('unit: operator watch scope', () => {
  it('--namespaces: a comma-separated list of namespace names; empty means every namespace', () => {
    expect(parseNamespaces(undefined)).to.equal(undefined);
    expect(parseNamespaces('')).to.equal(undefined);
    expect(parseNamespaces('team-a, team-b')).to.deep.equal(['team-a', 'team-b']);
    expect(() => parseNamespaces('Team_A')).to.throw('--namespaces: "Team_A" is not a namespace name');
    expect(() => parseNamespaces('a,,b')).to.throw('is not a namespace name');
    expect(() => parseNamespaces('a,a')).to.throw('listed twice');
    expect(() => parseNamespaces('x'.repeat(64))).to.throw('is not a namespace name');
  });

  it('--cluster-selector: equality, set-based and existence requirements', () => {
    expect(parseClusterSelector(undefined)).to.equal(undefined);
    for (const ok of ['svc.dev/shard=a', 'shard==a', 'shard!=b', 'shard in (a, b)', 'shard notin (c),tier', '!legacy', 'a=b,c in (d,e),!f']) {
      expect(parseClusterSelector(ok), ok).to.equal(ok);
    }
    for (const bad of ['shard=a b', '=a', 'shard in a', 'a,,b', 'shard=(a)']) {
      expect(() => parseClusterSelector(bad), bad).to.throw('is not a label selector requirement');
    }
  });

  it('svc-operator run refuses a bad scope with exit status 2 before it connects anywhere', async () => {
    const write = process.stderr.write;
    let err = '';
    process.stderr.write = ((chunk: string) => { err += chunk; return true; }) as typeof process.stderr.write;
    try {
      expect(await kubeMain(['run', '--namespaces', 'Bad_NS'])).to.equal(2);
      expect(await kubeMain(['run', '--cluster-selector', 'a b'])).to.equal(2);
    } finally {
      process.stderr.write = write;
    }
    expect(err).to.contain('--namespaces: "Bad_NS" is not a namespace name').and.contain('--cluster-selector: "a b"');
  });
});
