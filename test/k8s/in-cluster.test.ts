// A pod's in-cluster configuration on the node agent: the service-account volume the apiserver adds appears at
// /var/run/secrets/kubernetes.io/serviceaccount (private mount namespace), KUBERNETES_SERVICE_HOST/PORT name the
// apiserver, so @kubernetes/client-node's loadFromDefault() works inside the pod as it does in a real cluster.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { repoRoot } from './binaries.js';
import { sharedTestbed } from './fixture.js';
import { createNamespace } from './operator/helpers.js';
import { waitFor } from './proc.js';
import type { Testbed } from './testbed.js';

const NS = 'in-cluster';
const CLIENT = pathToFileURL(join(repoRoot(), 'node_modules', '@kubernetes', 'client-node', 'dist', 'index.js')).href;

describe('k8s testbed: in-cluster configuration of a pod', function () {
  this.timeout(120_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    await createNamespace(tb, NS);
  });

  it('a pod reads its service-account token at the fixed path and lists pods with it', async () => {
    await tb.kubectl(['-n', NS, 'create', 'role', 'pod-reader', '--verb=list', '--resource=pods']);
    await tb.kubectl(['-n', NS, 'create', 'rolebinding', 'pod-reader', '--role=pod-reader', `--serviceaccount=${NS}:default`]);
    const script = `
      import { readFileSync } from 'node:fs';
      const k8s = await import(${JSON.stringify(CLIENT)});
      const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
      const ns = readFileSync(dir + '/namespace', 'utf8');
      const kc = new k8s.KubeConfig();
      kc.loadFromDefault();
      const who = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
      const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: ns });
      console.log(JSON.stringify({ server: kc.getCurrentCluster().server, ns, user: who.status.userInfo.username, pods: pods.items.map((p) => p.metadata.name) }));`;
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'whoami' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'node:20', command: ['node', '--input-type=module', '-e', script] }] },
    }));
    const pod = await waitFor('the pod to finish', async () => {
      const p = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pod', 'whoami', '-o', 'json'])) as V1Pod;
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    }, 60_000);
    const log = readFileSync(join(tb.agent.logDir, `${NS}_whoami_main.log`), 'utf8');
    expect(pod.status?.phase, log).to.equal('Succeeded');
    // the apiserver added the projected service-account volume; the agent mounted it where the pod expects it
    expect(pod.spec?.containers[0].volumeMounts?.map((m) => m.mountPath)).to.include('/var/run/secrets/kubernetes.io/serviceaccount');
    const line = log.split('\n').find((l) => l.startsWith('{'));
    expect(line, log).to.be.a('string');
    const out = JSON.parse(line!) as { server: string; ns: string; user: string; pods: string[] };
    expect(out.ns).to.equal(NS);
    expect(out.user).to.equal(`system:serviceaccount:${NS}:default`);
    expect(out.pods).to.include('whoami');
    expect(out.server).to.equal(new URL(`https://${new URL(tb.controlPlane.server).host}`).origin);
  });
});
