// The control plane itself: release, RBAC, and the controllers of kube-controller-manager.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedVersion, startControlPlane } from './control-plane.js';
import { sharedTestbed } from './fixture.js';
import { waitFor } from '../../harness/process.js';
import type { Testbed } from './testbed.js';

describe('k8s testbed: control plane', function () {
  this.timeout(180_000);
  let tb: Testbed;
  before(async () => { tb = await sharedTestbed(); });

  it('serves /version of the pinned release, to the apiserver and to the kubectl that was built', async () => {
    const res = await tb.controlPlane.get('/version');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body).gitVersion).to.equal(pinnedVersion());
    const v = JSON.parse(await tb.kubectl(['version', '-o', 'json'])) as { clientVersion: { gitVersion: string }; serverVersion: { gitVersion: string } };
    expect(v.clientVersion.gitVersion).to.equal(pinnedVersion());
    expect(v.serverVersion.gitVersion).to.equal(pinnedVersion());
  });

  it('stores its data in svc by default (SVC_K8S_STORAGE=etcd: the etcd built with Kubernetes)', async () => {
    const cp = tb.controlPlane;
    expect(cp.storage).to.equal(process.env.SVC_K8S_STORAGE === 'etcd' ? 'etcd' : 'svc');
    const version = (await (await fetch(`${cp.etcdUrl}/version`)).json()) as { etcdserver: string };
    if (cp.storage === 'svc') expect(version.etcdserver).to.equal('3.5.21');
    // What kube-apiserver wrote is in that member: the default namespace under /registry.
    const key = Buffer.from('/registry/namespaces/default').toString('base64');
    const res = (await (await fetch(`${cp.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key, count_only: true }) })).json()) as { count?: string };
    expect(res.count).to.equal('1');
  });

  it('authorizes with RBAC: a service account without bindings is refused, then allowed once bound', async () => {
    await tb.kubectl(['create', 'namespace', 'rbac-check']);
    await tb.kubectl(['-n', 'rbac-check', 'create', 'serviceaccount', 'nobody']);
    const token = (await tb.kubectl(['-n', 'rbac-check', 'create', 'token', 'nobody'])).trim();
    const denied = await tb.controlPlane.get('/api/v1/namespaces/rbac-check/secrets', token);
    expect(denied.status).to.equal(403);
    expect(JSON.parse(denied.body).message).to.contain('system:serviceaccount:rbac-check:nobody');
    await tb.kubectl(['-n', 'rbac-check', 'create', 'role', 'read-secrets', '--verb=list', '--resource=secrets']);
    await tb.kubectl(['-n', 'rbac-check', 'create', 'rolebinding', 'nobody-reads', '--role=read-secrets', '--serviceaccount=rbac-check:nobody']);
    await waitFor('the role binding to take effect', async () =>
      (await tb.controlPlane.get('/api/v1/namespaces/rbac-check/secrets', token)).status === 200 ? true : undefined, 30_000);
    expect((await tb.controlPlane.get('/api/v1/namespaces/rbac-check/configmaps', token)).status).to.equal(403);
  });

  it('runs the StatefulSet controller (pods created) and the garbage collector (pods removed with their owner)', async () => {
    await tb.kubectl(['create', 'namespace', 'kcm-check']);
    // a scheduler nobody runs: the pods stay unbound, so this checks kube-controller-manager alone
    await tb.kubectl(['-n', 'kcm-check', 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'idle' },
      spec: {
        replicas: 2, podManagementPolicy: 'Parallel', serviceName: 'idle', selector: { matchLabels: { app: 'idle' } },
        template: { metadata: { labels: { app: 'idle' } }, spec: { schedulerName: 'nobody', containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'] }] } },
      },
    }));
    const names = await waitFor('two pods of the StatefulSet', async () => {
      const out = (await tb.kubectl(['-n', 'kcm-check', 'get', 'pods', '-l', 'app=idle', '-o', 'jsonpath={.items[*].metadata.name}'])).trim();
      return out.split(/\s+/).length === 2 ? out.split(/\s+/).sort() : undefined;
    }, 60_000);
    expect(names).to.deep.equal(['idle-0', 'idle-1']);
    const owner = (await tb.kubectl(['-n', 'kcm-check', 'get', 'pod', 'idle-0', '-o', 'jsonpath={.metadata.ownerReferences[0].kind}'])).trim();
    expect(owner).to.equal('StatefulSet');
    await tb.kubectl(['-n', 'kcm-check', 'delete', 'statefulset', 'idle', '--cascade=background', '--wait=true']);
    await waitFor('the garbage collector to delete the pods', async () =>
      (await tb.kubectl(['-n', 'kcm-check', 'get', 'pods', '-o', 'name'])).trim() === '' ? true : undefined, 60_000);
  });

  it('stops cleanly: a second control plane on its own ports, gone after stop()', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-cp-'));
    const cp = await startControlPlane({ workDir: dir });
    try {
      expect(cp.server).to.not.equal(tb.controlPlane.server);
      expect((await cp.get('/readyz')).status).to.equal(200);
      expect(cp.pids.every(alive)).to.equal(true);
    } finally {
      await cp.stop();
    }
    expect(cp.pids.some(alive)).to.equal(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}
