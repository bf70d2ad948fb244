// Default placement of the members (runtime/kubernetes/manifests.ts): spread over nodes and zones, soft, and
// replaced by spec.podTemplate.affinity. The k8s tier runs it on its one node (every member still schedules).
import { expect } from 'chai';
import { defaultAffinity, ownedObjects, selectorLabels } from '../../../operator/runtime/kubernetes/manifests.js';
import { withDefaults } from '../../../operator/api/validate.js';
import type { SvcClusterSpec } from '../../../operator/api/types.js';

interface Term { labelSelector: { matchLabels: Record<string, string> }; topologyKey: string }
interface Affinity {
  podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: Array<{ weight: number; podAffinityTerm: Term }>; requiredDuringSchedulingIgnoredDuringExecution?: unknown };
  nodeAffinity?: unknown;
}

function podSpec(spec: Partial<SvcClusterSpec>): { affinity?: Affinity; topologySpreadConstraints?: unknown } {
  const objs = ownedObjects({ name: 'kv', namespace: 'ns', uid: 'u', spec: withDefaults({ version: '3.5.21', replicas: 3, ...spec } as SvcClusterSpec) }, '3.5.21');
  const sts = objs.find((o) => o.kind === 'StatefulSet') as unknown as { spec: { template: { spec: { affinity?: Affinity } } } };
  return sts.spec.template.spec;
}

describe('unit: default placement of the members', () => {
  it('prefers one member per node, then per zone, selecting only this cluster\'s pods; never required', () => {
    const a = podSpec({}).affinity!;
    expect(a).to.deep.equal(defaultAffinity('kv'));
    const prefs = a.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution!;
    expect(prefs.map((p) => [p.podAffinityTerm.topologyKey, p.weight])).to.deep.equal([['kubernetes.io/hostname', 100], ['topology.kubernetes.io/zone', 50]]);
    for (const p of prefs) expect(p.podAffinityTerm.labelSelector.matchLabels).to.deep.equal(selectorLabels('kv'));
    // soft: a one-node (or one-zone) Kubernetes still schedules every member
    expect(a.podAntiAffinity).to.not.have.property('requiredDuringSchedulingIgnoredDuringExecution');
    expect(a).to.not.have.property('nodeAffinity');
  });

  it('spec.podTemplate.affinity replaces the default whole', () => {
    const mine = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] } } };
    expect(podSpec({ podTemplate: { affinity: mine } }).affinity).to.deep.equal(mine);
  });

  it('another cluster\'s members do not repel this one\'s', () => {
    const other = podSpec({}).affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution![0].podAffinityTerm.labelSelector.matchLabels;
    expect(other['app.kubernetes.io/instance']).to.equal('kv');
    expect(defaultAffinity('other')).to.not.deep.equal(defaultAffinity('kv'));
  });
});
