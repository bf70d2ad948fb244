// A pod's in-cluster configuration on the real node: the kubelet mounts the service-account volume the apiserver
// adds, KUBERNETES_SERVICE_HOST/PORT name the `kubernetes` Service's ClusterIP (served here by the node's relay on
// the bridge), so @kubernetes/client-node's loadFromDefault() in our image works as it does in any cluster.
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { sharedTestbed } from './fixture.js';
import { RESTRICTED_CONTAINER, RESTRICTED_POD, createRestrictedNamespace } from './namespaces.js';
import { POD_NET } from './node/network.js';
import { waitFor } from '../../harness/process.js';
import type { Testbed } from './testbed.js';

const NS = 'in-cluster';
// the client library as the image has it (a production dependency of svc-operator)
const CLIENT = 'file:///opt/svc/node_modules/@kubernetes/client-node/dist/index.js';

describe('k8s testbed: in-cluster configuration of a pod', function () {
  this.timeout(120_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    await createRestrictedNamespace(tb, NS);
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
      spec: {
        restartPolicy: 'Never', securityContext: RESTRICTED_POD,
        containers: [{ name: 'main', image: tb.images.svc[tb.images.newest], command: ['node', '--input-type=module', '-e', script], securityContext: RESTRICTED_CONTAINER }],
      },
    }));
    const pod = await waitFor('the pod to finish', async () => {
      const p = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pod', 'whoami', '-o', 'json'])) as V1Pod;
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    }, 60_000);
    const log = await tb.kubectl(['-n', NS, 'logs', 'whoami']);
    expect(pod.status?.phase, log).to.equal('Succeeded');
    // the apiserver added the projected service-account volume; the kubelet mounted it where the pod expects it
    expect(pod.spec?.containers[0].volumeMounts?.map((m) => m.mountPath)).to.include('/var/run/secrets/kubernetes.io/serviceaccount');
    const line = log.split('\n').find((l) => l.startsWith('{'));
    expect(line, log).to.be.a('string');
    const out = JSON.parse(line!) as { server: string; ns: string; user: string; pods: string[] };
    expect(out.ns).to.equal(NS);
    expect(out.user).to.equal(`system:serviceaccount:${NS}:default`);
    expect(out.pods).to.include('whoami');
    expect(new URL(out.server).origin).to.equal(`https://${POD_NET.apiServiceIp}`);
  });
});
