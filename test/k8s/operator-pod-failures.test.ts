// Pod-level failures provoked on the real node, each shown by the operator: condition Stalled with the reason,
// status.lastError, the STEP column, a Warning Event. A missing image (pulled from nowhere: a registry on loopback
// that does not exist), a node selector no node matches, a storage class that does not exist, a memory limit svc
// cannot start in, a value the member refuses (an environment variable that is no integer: the member exits at once), and pods the
// apiserver refuses to create (a quota of zero pods: FailedCreate, as a Pod Security refusal is).
import { expect } from 'chai';
import { join } from 'node:path';
import type { SvcClusterStatus } from '../../operator/api/types.js';
import { binary, repoRoot } from './binaries.js';
import { useOperator } from './operator/fixture.js';
import { runCommand, waitFor } from '../../harness/process.js';

const NS = 'svcc-podfail';
const NS_QUOTA = 'svcc-podfail-q';

interface Case { name: string; ns: string; reason: string; spec: Record<string, unknown>; message: RegExp }

const CASES: Case[] = [
  { name: 'pull', ns: NS, reason: 'ImagePullBackOff', spec: { version: '3.5.21', replicas: 1, image: { repository: 'localhost/svc-missing' } }, message: /svc-missing/ },
  { name: 'nosched', ns: NS, reason: 'Unschedulable', spec: { version: '3.5.21', replicas: 1, podTemplate: { nodeSelector: { 'svc.dev/no-such-node': 'true' } } }, message: /node/ },
  { name: 'noclass', ns: NS, reason: 'ClaimPending', spec: { version: '3.5.21', replicas: 1, storage: { storageClassName: 'svc-no-such-class' } }, message: /claim data-noclass-0 is Pending \(storage class svc-no-such-class\)/ },
  { name: 'oom', ns: NS, reason: 'OOMKilled', spec: { version: '3.5.21', replicas: 1, resources: { limits: { memory: '24Mi' } } }, message: /more memory than its limit \(24Mi\)/ },
  { name: 'crash', ns: NS, reason: 'CrashLoopBackOff', spec: { version: '3.5.21', replicas: 1, podTemplate: { env: [{ name: 'SVC_SNAPSHOT_COUNT', value: 'not-a-number' }] } }, message: /keeps exiting/ },
  { name: 'quota', ns: NS_QUOTA, reason: 'FailedCreate', spec: { version: '3.5.21', replicas: 1 }, message: /forbidden: exceeded quota|quota/ },
];

describe('k8s: pod-level failures are shown (Stalled, lastError, STEP, a Warning Event)', function () {
  this.timeout(300_000);
  const op = useOperator(NS, { namespaces: [NS_QUOTA] });

  before(async () => {
    await op.tb.kubectl(['-n', NS_QUOTA, 'apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } }));
    for (const c of CASES) {
      await op.tb.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: c.name, namespace: c.ns }, spec: c.spec }));
    }
  });

  for (const c of CASES) {
    it(`${c.reason}: ${c.name}`, async () => {
      const get = async () => (JSON.parse(await op.tb.kubectl(['-n', c.ns, 'get', 'svcc', c.name, '-o', 'json'])) as { status?: SvcClusterStatus }).status;
      const st = await waitFor(`${c.reason} shown for ${c.name}`, async () => {
        const s = await get();
        return s?.conditions?.some((x) => x.type === 'Stalled' && x.status === 'True' && x.reason === c.reason) ? s : undefined;
      }, 240_000, 1000).catch(async (e: Error) => {
        const pods = await op.tb.kubectl(['-n', c.ns, 'get', 'pods,pvc,events', '-o', 'wide']).catch(() => '');
        throw new Error(`${e.message}\nstatus: ${JSON.stringify(await get())}\n${pods}`);
      });
      const stalled = st.conditions!.find((x) => x.type === 'Stalled')!;
      expect(stalled.message).to.match(c.message);
      expect(st.conditions!.find((x) => x.type === 'Ready')!.status).to.equal('False');
      expect(st.lastError).to.contain(`${c.reason}: `);
      expect(st.step).to.equal(c.reason);
      const row = await op.tb.kubectl(['-n', c.ns, 'get', 'svcc', c.name, '--no-headers']);
      expect(row.split(/\s+/)).to.include(c.reason); // the STEP column
      const evs = JSON.parse(await op.tb.kubectl(['-n', c.ns, 'get', 'events', '--field-selector', `involvedObject.name=${c.name},reason=${c.reason}`, '-o', 'json'])) as { items: Array<{ type: string; message: string }> };
      expect(evs.items.length, `a ${c.reason} Event`).to.be.at.least(1);
      expect(evs.items[0].type).to.equal('Warning');
    });
  }

  it('`kubectl svc status` shows the pod problem of a stalled cluster', async () => {
    const env = { ...process.env, KUBECONFIG: op.tb.kubeconfigPath, PATH: `${join(repoRoot(), 'bin')}:${process.env.PATH ?? ''}` };
    const { stdout } = await runCommand([binary('kubectl'), 'svc', 'status', 'pull', '-n', NS], { env });
    expect(stdout).to.match(/^Stalled:\s+ImagePullBackOff: pull-0: ImagePullBackOff: /m);
    expect(stdout).to.match(/^pull-0\s+unknown\s+-\s+UNREACHABLE\s.*\s(ImagePullBackOff|ErrImagePull)\s+localhost\/svc-missing:v3\.5\.21$/m);
  });
});
