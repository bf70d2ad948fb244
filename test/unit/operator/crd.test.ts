// The SvcCluster CRD: the checked-in file is the generator's output, `svc-operator crd` prints it, and the
// schema says what operator/api says (defaults, rules, printer columns).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { svcClusterCrd, svcClusterCrdYaml, type Schema } from '../../../operator/api/crd.js';
import { kubeMain } from '../../../operator/cli/kube.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { repoRoot } from '../../k8s/binaries.js';

const CRD_FILE = join(repoRoot(), 'crds', 'svc.dev_svcclusters.yaml');

interface Version { name: string; additionalPrinterColumns: Array<{ name: string; jsonPath: string }>; schema: { openAPIV3Schema: Schema }; subresources: object }

function version(): Version {
  return ((svcClusterCrd().spec as { versions: Version[] }).versions)[0];
}

describe('SvcCluster CRD', () => {
  it('crds/svc.dev_svcclusters.yaml is exactly what the generator prints', () => {
    expect(readFileSync(CRD_FILE, 'utf8'), 'run `svc-operator crd > crds/svc.dev_svcclusters.yaml`').to.equal(svcClusterCrdYaml());
  });

  it('`svc-operator crd` prints the generator output', async () => {
    let out = '';
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => { out += chunk; return true; }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await kubeMain(['crd']);
    } finally {
      process.stdout.write = orig;
    }
    expect(code).to.equal(0);
    expect(out).to.equal(svcClusterCrdYaml());
    expect((load(out.replace(/^#.*\n---\n/, '')) as { kind: string }).kind).to.equal('CustomResourceDefinition');
  });

  it('names, status subresource and the printer columns an on-call engineer wants', () => {
    const crd = svcClusterCrd() as { metadata: { name: string }; spec: { group: string; names: { plural: string; shortNames: string[]; kind: string } } };
    expect(crd.metadata.name).to.equal('svcclusters.svc.dev');
    expect(crd.spec.names).to.include({ kind: 'SvcCluster', plural: 'svcclusters' });
    expect(crd.spec.names.shortNames).to.deep.equal(['svcc']);
    const v = version();
    expect(v.name).to.equal('v1alpha1');
    expect(v.subresources).to.deep.equal({ status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } });
    expect((crd.spec as { names: Record<string, unknown> }).names, 'not in `kubectl get/delete all`').to.not.have.property('categories');
    expect(v.additionalPrinterColumns.map((c) => c.name.toUpperCase())).to.deep.equal(['VERSION', 'RUNNING', 'CLUSTER', 'READY', 'PHASE', 'STEP', 'LEADER', 'AGE']);
  });

  it('schema defaults agree with withDefaults()', () => {
    const spec = version().schema.openAPIV3Schema.properties!.spec;
    const d = withDefaults({ version: '3.4.34' } as never);
    expect(spec.properties!.replicas.default).to.equal(d.replicas);
    expect(spec.properties!.backup.properties!.keep.default).to.equal(d.backup!.keep);
    expect(spec.properties!.upgrade.properties!.paused.default).to.equal(d.upgrade!.paused);
    expect(spec.properties!.upgrade.properties!.waitBetweenMembersSeconds.default).to.equal(d.upgrade!.waitBetweenMembersSeconds);
    expect(spec.properties!.upgrade.properties!.acknowledgeLargeV2Data.default).to.equal(d.upgrade!.acknowledgeLargeV2Data);
    expect(spec.required).to.deep.equal(['version']);
  });

  it('every schema node is structural (a type, preserve-unknown-fields, or int-or-string)', () => {
    const walk = (s: Schema, path: string): void => {
      expect(s.type !== undefined || s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-int-or-string'] === true, path).to.equal(true);
      for (const [k, c] of Object.entries(s.properties ?? {})) walk(c, `${path}.${k}`);
      if (s.items) walk(s.items, `${path}[]`);
      if (s.additionalProperties) walk(s.additionalProperties, `${path}{}`);
    };
    walk(version().schema.openAPIV3Schema, '');
  });
});
