// The SvcCluster CRD in a real kube-apiserver: it is accepted, defaults are applied, and the schema and CEL
// rules reject what operator/api/validate.ts rejects, with its messages.
import { expect } from 'chai';
import { sharedTestbed } from './fixture.js';
import { installCrd } from './operator/helpers.js';
import type { Testbed } from './testbed.js';

const NS = 'svcc-crd';

function cluster(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, namespace: NS }, spec });
}

describe('k8s: the SvcCluster CRD in the apiserver', function () {
  this.timeout(120_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    await installCrd(tb);
    await tb.kubectl(['create', 'namespace', NS]);
  });

  async function rejected(doc: string, verb = 'create'): Promise<string> {
    try {
      await tb.kubectl([verb, '-f', '-'], doc);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('the apiserver accepted it');
  }

  it('accepts a minimal SvcCluster and applies the defaults', async () => {
    await tb.kubectl(['create', '-f', '-'], cluster('minimal', { version: '3.4.34' }));
    const got = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'svcc', 'minimal', '-o', 'json'])) as { spec: Record<string, unknown> };
    expect(got.spec).to.deep.include({ version: '3.4.34', replicas: 3, backup: { keep: 3 } });
    expect(got.spec.upgrade).to.deep.equal({ paused: false, waitBetweenMembersSeconds: 0, acknowledgeLargeV2Data: false });
    // printer columns
    const table = await tb.kubectl(['-n', NS, 'get', 'svcc', 'minimal']);
    expect(table.split('\n')[0].split(/\s+/).filter(Boolean)).to.deep.equal(['NAME', 'VERSION', 'RUNNING', 'CLUSTER', 'READY', 'PHASE', 'STEP', 'LEADER', 'AGE']);
  });

  it('rejects even or out-of-range replicas (0 hibernates)', async () => {
    for (const replicas of [2, -1, 9]) {
      expect(await rejected(cluster(`r${replicas}`, { version: '3.4.34', replicas }))).to.contain('spec.replicas must be an odd integer from 1 to 7, or 0 to hibernate');
    }
  });

  it('rejects malformed versions and unsupported release lines', async () => {
    expect(await rejected(cluster('badver', { version: '3.4' }))).to.contain('spec.version must be "<major>.<minor>.<patch>"');
    expect(await rejected(cluster('oldline', { version: '3.2.32' }))).to.contain('spec.version must be of a supported release line (3.3, 3.4, 3.5, 3.6, 3.7)');
    expect(await rejected(cluster('nover', { replicas: 3 }))).to.match(/spec\.version: Required value/);
  });

  it('rejects unknown enum values and names longer than 50 characters', async () => {
    expect(await rejected(cluster('badlog', { version: '3.5.21', logging: { logger: 'glog' } }))).to.match(/spec\.logging\.logger: Unsupported value: "glog"/);
    expect(await rejected(cluster('n'.repeat(51), { version: '3.5.21' }))).to.contain('metadata.name must be at most 50 characters');
  });

  it('keeps spec.storage.storageClassName immutable', async () => {
    await tb.kubectl(['create', '-f', '-'], cluster('fixedclass', { version: '3.5.21', storage: { storageClassName: 'fast' } }));
    expect(await rejected(cluster('fixedclass', { version: '3.5.21', storage: { storageClassName: 'slow' } }), 'replace')).to.contain('spec.storage.storageClassName is immutable');
    expect(await rejected(cluster('fixedclass', { version: '3.5.21' }), 'replace')).to.contain('spec.storage.storageClassName is immutable');
    // other fields still change
    await tb.kubectl(['-n', NS, 'patch', 'svcc', 'fixedclass', '--type=merge', '-p', '{"spec":{"version":"3.5.20","storage":{"size":"2Gi"}}}']);
  });

  it('storage size changes pass the CRD (the operator refuses a shrink against the live volumes, with a condition); quantities are int-or-string of the quantity grammar', async () => {
    await tb.kubectl(['create', '-f', '-'], cluster('sized', { version: '3.5.21', storage: { size: '2Gi' }, resources: { requests: { cpu: 1, memory: '64Mi' }, limits: { memory: '128Mi' } } }));
    const got = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'svcc', 'sized', '-o', 'json'])) as { spec: { resources: { requests: Record<string, unknown> } } };
    expect(got.spec.resources.requests).to.deep.equal({ cpu: 1, memory: '64Mi' });
    // (a growth the class refuses must be revertible: the volumes, not the last spec, are what a size is measured against)
    await tb.kubectl(['-n', NS, 'patch', 'svcc', 'sized', '--type=merge', '-p', '{"spec":{"storage":{"size":"1500Mi"}}}']);
    await tb.kubectl(['-n', NS, 'patch', 'svcc', 'sized', '--type=merge', '-p', '{"spec":{"storage":{"size":"3Gi"}}}']);
    expect(await rejected(cluster('badsize', { version: '3.5.21', storage: { size: 'big' } }))).to.match(/spec\.storage\.size in body should match/);
    expect(await rejected(cluster('badmem', { version: '3.5.21', resources: { limits: { memory: 'lots' } } }))).to.match(/spec\.resources\.limits\.memory in body should match/);
    expect(await rejected(cluster('badcpu', { version: '3.5.21', resources: { requests: { cpu: true } } }))).to.match(/spec\.resources\.requests\.cpu/);
  });

  it('status is a subresource: a status write does not bump generation, and the columns show it', async () => {
    const before = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'svcc', 'minimal', '-o', 'json'])) as { metadata: { generation: number } };
    await tb.kubectl(['-n', NS, 'patch', 'svcc', 'minimal', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running","ready":"3/3"}}']);
    const after = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'svcc', 'minimal', '-o', 'json'])) as { metadata: { generation: number }; status: { phase: string } };
    expect(after.status.phase).to.equal('Running');
    expect(after.metadata.generation).to.equal(before.metadata.generation);
    const table = await tb.kubectl(['-n', NS, 'get', 'svcc', 'minimal', '--no-headers']);
    expect(table).to.match(/^minimal\s+3\.4\.34\s+3\/3\s+Running/); // empty RUNNING and CLUSTER
    await tb.kubectl(['delete', 'namespace', NS, '--wait=false']);
  });
});
