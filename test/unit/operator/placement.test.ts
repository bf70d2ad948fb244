// Default placement of the members (runtime/kubernetes/manifests.ts): spread over nodes and zones, soft, and
// replaced by spec.podTemplate.affinity. The k8s tier runs it on its one node (every member still schedules).
import { expect } from 'chai';
import { defaultAffinity, ownedObjects, selectorLabels } from '../../../operator/runtime/kubernetes/manifests.js';
import { specProblems, withDefaults } from '../../../operator/api/validate.js';
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

describe('unit: spec.podTemplate annotations and env reach the members', () => {
  interface Template { metadata: { annotations: Record<string, string> }; spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } }
  const template = (spec: Partial<SvcClusterSpec>): Template => {
    const objs = ownedObjects({ name: 'kv', namespace: 'ns', uid: 'u', spec: withDefaults({ version: '3.5.21', replicas: 3, ...spec } as SvcClusterSpec) }, '3.5.21');
    return (objs.find((o) => o.kind === 'StatefulSet') as unknown as { spec: { template: Template } }).spec.template;
  };
  const hash = (spec: Partial<SvcClusterSpec>) => template(spec).metadata.annotations['svc.dev/config-hash'];

  it('annotations on the pods, env after the operator\'s own; each change is a new configuration (a rollout)', () => {
    const t = template({ podTemplate: { annotations: { 'example.com/team': 'db' }, env: [{ name: 'GODEBUG', value: 'x=1' }] } });
    expect(t.metadata.annotations['example.com/team']).to.equal('db');
    const env = t.spec.containers[0].env.map((e) => e.name);
    expect(env[0]).to.equal('POD_NAME');
    expect(env.at(-1)).to.equal('GODEBUG');
    const base = hash({});
    expect(hash({ podTemplate: {} }), 'no template fields: the same configuration as before the fields existed').to.equal(base);
    expect(hash({ podTemplate: { annotations: { a: '1' } } })).to.not.equal(base);
    expect(hash({ podTemplate: { annotations: { a: '2' } } })).to.not.equal(hash({ podTemplate: { annotations: { a: '1' } } }));
    expect(hash({ podTemplate: { env: [{ name: 'GODEBUG', value: 'x=1' }] } })).to.not.equal(base);
  });

  it('refuses the operator\'s own variables and annotation keys, duplicates and bad names, each with a message', () => {
    const problems = specProblems({ version: '3.5.21', replicas: 3, podTemplate: {
      annotations: { 'svc.dev/config-hash': 'x', ok: 'y' },
      env: [{ name: 'POD_NAME', value: 'x' }, { name: 'A', value: '1' }, { name: 'A', value: '2' }, { name: '1 bad' }, { name: 'B', value: 'v', valueFrom: {} }],
    } });
    expect(problems).to.deep.equal([
      'spec.podTemplate.annotations: svc.dev/config-hash is the operator\'s own (svc.dev/ keys are reserved)',
      'spec.podTemplate.env: POD_NAME is set by the operator (use the spec field that sets it)',
      'spec.podTemplate.env: A is listed twice',
      'spec.podTemplate.env: "1 bad" is not a variable name',
      'spec.podTemplate.env: B has both value and valueFrom',
    ]);
    expect(specProblems({ version: '3.5.21', replicas: 3, podTemplate: { annotations: { 'example.com/a': 'b' }, env: [{ name: 'GODEBUG', value: '1' }] } })).to.deep.equal([]);
  });

  it('spec.podTemplate.topologySpreadConstraints and priorityClassName reach the pod template (and roll the members)', () => {
    const spread = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selectorLabels('kv') } }];
    const pod = podSpec({ podTemplate: { topologySpreadConstraints: spread, priorityClassName: 'svc-critical' } }) as { topologySpreadConstraints?: unknown; priorityClassName?: string };
    expect(pod.topologySpreadConstraints).to.deep.equal(spread);
    expect(pod.priorityClassName).to.equal('svc-critical');
    const plain = podSpec({}) as { topologySpreadConstraints?: unknown; priorityClassName?: string };
    expect(plain).to.not.have.property('topologySpreadConstraints');
    expect(plain).to.not.have.property('priorityClassName');
  });

  it('spec.service: the client Service\'s type, labels and annotations (the operator\'s own win; svc.dev/ keys refused)', () => {
    const service = (spec: Partial<SvcClusterSpec>) => ownedObjects({ name: 'kv', namespace: 'ns', uid: 'u', spec: withDefaults({ version: '3.5.21', replicas: 3, ...spec } as SvcClusterSpec) }, '3.5.21')
      .find((o) => o.kind === 'Service' && o.metadata.name === 'kv-client') as unknown as { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { type?: string } };
    const lb = service({ service: { type: 'LoadBalancer', labels: { team: 'db', 'app.kubernetes.io/instance': 'mine' }, annotations: { 'lb.example.com/internal': 'true' } } });
    expect(lb.spec.type).to.equal('LoadBalancer');
    expect(lb.metadata.labels).to.include({ team: 'db', 'app.kubernetes.io/instance': 'kv' });
    expect(lb.metadata.annotations['lb.example.com/internal']).to.equal('true');
    expect(lb.metadata.annotations['svc.dev/applied-hash']).to.match(/^[0-9a-f]{16}$/);
    const plain = service({});
    expect(plain.spec).to.not.have.property('type');
    expect(plain.metadata.annotations['svc.dev/applied-hash']).to.not.equal(lb.metadata.annotations['svc.dev/applied-hash']);
    expect(specProblems({ version: '3.5.21', replicas: 3, service: { type: 'ExternalName' as 'ClusterIP', annotations: { 'svc.dev/x': 'y' } } })).to.deep.equal([
      'spec.service.type must be ClusterIP, NodePort or LoadBalancer, not ExternalName',
      'spec.service.annotations: svc.dev/x is the operator\'s own (svc.dev/ keys are reserved)',
    ]);
  });

  it('hibernation (LiveShape.hibernated): the StatefulSet runs no pod and keeps its claims (whenScaled Retain); awake, Delete again', () => {
    const sts = (live: { replicas?: number; hibernated?: boolean }) => ownedObjects({ name: 'kv', namespace: 'ns', uid: 'u', spec: withDefaults({ version: '3.5.21', replicas: 0 }) }, '3.5.21', live)
      .find((o) => o.kind === 'StatefulSet') as unknown as { spec: { replicas: number; persistentVolumeClaimRetentionPolicy: { whenScaled: string; whenDeleted: string } } };
    expect(sts({ replicas: 3, hibernated: true }).spec).to.deep.include({ replicas: 0, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } });
    expect(sts({ replicas: 3 }).spec).to.deep.include({ replicas: 3, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' } });
  });
});
