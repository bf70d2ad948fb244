// The real node end to end, with svc as its workload: a StatefulSet of svc 3.4.34 (our image, built from the
// Dockerfile) with 3 replicas, started the way the operator starts members (image tag picks the release, flags are
// etcd's, peer URLs use the pods' DNS names, data on claims the local-path provisioner binds) in a namespace that
// enforces Pod Security `restricted`. Pods get addresses on the node's bridge, names resolve through CoreDNS, the
// client Service's EndpointSlice lists the ready members, and the network rules hold while they run.
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { sharedTestbed } from './fixture.js';
import { RESTRICTED_CONTAINER, RESTRICTED_POD, createRestrictedNamespace } from './namespaces.js';
import { installClusterDns } from './node/cluster-dns.js';
import { POD_NET } from './node/network.js';
import { waitFor } from '../../harness/process.js';
import type { Testbed } from './testbed.js';

const NS = 'svc-check';
const NAME = 'kv';
const PEERS = 'kv-peers';
const RELEASE = '3.4.34';

function peerUrl(i: number): string {
  return `http://${NAME}-${i}.${PEERS}.${NS}.svc:2380`;
}

/** The manifests an operator would create for a 3-member cluster. */
export function svcManifests(replicas = 3): object {
  const initialCluster = Array.from({ length: replicas }, (_, i) => `${NAME}-${i}=${peerUrl(i)}`).join(',');
  return {
    apiVersion: 'v1', kind: 'List', items: [
      // peers must find each other before they are ready (quorum comes first), hence publishNotReadyAddresses
      { apiVersion: 'v1', kind: 'Service', metadata: { name: PEERS },
        spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: NAME },
          ports: [{ name: 'client', port: 2379 }, { name: 'peer', port: 2380 }] } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: `${NAME}-client` },
        spec: { selector: { app: NAME }, ports: [{ name: 'client', port: 2379 }] } },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: NAME },
        spec: {
          replicas, serviceName: PEERS, podManagementPolicy: 'Parallel', selector: { matchLabels: { app: NAME } },
          template: {
            metadata: { labels: { app: NAME } },
            spec: {
              terminationGracePeriodSeconds: 10,
              securityContext: RESTRICTED_POD,
              containers: [{
                name: 'svc', image: `svc:v${RELEASE}`,
                // no command: the image's entrypoint is svc
                args: [
                  '--name=$(POD_NAME)', '--data-dir=/var/lib/svc/data',
                  '--listen-client-urls=http://0.0.0.0:2379',
                  `--advertise-client-urls=http://$(POD_NAME).${PEERS}.$(POD_NAMESPACE).svc:2379`,
                  '--listen-peer-urls=http://0.0.0.0:2380',
                  `--initial-advertise-peer-urls=http://$(POD_NAME).${PEERS}.$(POD_NAMESPACE).svc:2380`,
                  `--initial-cluster=${initialCluster}`, '--initial-cluster-token=kv-test', '--initial-cluster-state=new',
                ],
                ports: [{ name: 'client', containerPort: 2379 }, { name: 'peer', containerPort: 2380 }],
                env: [
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                ],
                volumeMounts: [{ name: 'data', mountPath: '/var/lib/svc' }],
                readinessProbe: { httpGet: { path: '/health', port: 'client' }, periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 3 },
                securityContext: RESTRICTED_CONTAINER,
              }],
            },
          },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100Mi' } } } }],
        } },
    ],
  };
}

async function getJson(url: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: body ? 'POST' : 'GET', body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(5000),
  });
  expect(res.status, url).to.equal(200);
  return await res.json() as Record<string, unknown>;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('k8s testbed: the real node runs a StatefulSet of svc members', function () {
  this.timeout(300_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    installClusterDns(tb.node.dnsIp);
    await createRestrictedNamespace(tb, NS);
  });
  after(async () => {
    await tb?.kubectl(['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
  });

  it('refuses a pod that breaks Pod Security restricted in the namespace', async () => {
    const err = await tb.kubectl(['-n', NS, 'run', 'rooty', `--image=svc:v${RELEASE}`, '--restart=Never', '--', '--version'])
      .then(() => undefined, (e: Error) => e.message);
    expect(err).to.match(/violates PodSecurity "restricted/);
  });

  it(`forms one cluster of 3 members of svc ${RELEASE}`, async () => {
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify(svcManifests()));
    await tb.kubectl(['-n', NS, 'rollout', 'status', `statefulset/${NAME}`, '--timeout=240s']);
    const pods = (JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pods', '-l', `app=${NAME}`, '-o', 'json'])) as { items: V1Pod[] }).items;
    expect(pods).to.have.length(3);
    // real containers of our image, on the node, with addresses on its bridge
    for (const p of pods) {
      expect(p.spec?.nodeName).to.equal(tb.node.name);
      expect(p.status?.podIP).to.match(/^10\.244\.0\.\d+$/);
      expect(p.status?.containerStatuses?.[0].containerID).to.match(/^containerd:\/\//);
      expect(p.status?.containerStatuses?.[0].image).to.contain(`svc:v${RELEASE}`);
    }
    expect(new Set(pods.map((p) => p.status?.podIP)).size).to.equal(3);
    const claims = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pvc', '-o', 'json'])) as { items: Array<{ spec: { storageClassName?: string }; status: { phase: string } }> };
    expect(claims.items.map((c) => [c.spec.storageClassName, c.status.phase])).to.deep.equal([['local-path', 'Bound'], ['local-path', 'Bound'], ['local-path', 'Bound']]);
    for (let i = 0; i < 3; i++) {
      const client = `http://${NAME}-${i}.${PEERS}.${NS}.svc:2379`;
      expect(await getJson(`${client}/health`)).to.include({ health: 'true' });
      expect(await getJson(`${client}/version`)).to.include({ etcdserver: RELEASE });
    }
    const list = await getJson(`http://${NAME}-0.${PEERS}.${NS}.svc:2379/v3/cluster/member/list`, {});
    const members = list.members as { name: string; peerURLs: string[] }[];
    expect(members.map((m) => m.name).sort()).to.deep.equal([`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    // a write through one member is read through another
    await getJson(`http://${NAME}-0.${PEERS}.${NS}.svc:2379/v3/kv/put`, { key: b64('k8s'), value: b64('works') });
    const got = await getJson(`http://${NAME}-2.${PEERS}.${NS}.svc:2379/v3/kv/range`, { key: b64('k8s') });
    const kvs = got.kvs as { value: string }[];
    expect(Buffer.from(kvs[0].value, 'base64').toString()).to.equal('works');
    // no kube-proxy here: the client Service is checked through its EndpointSlice, which lists the ready members
    const slices = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${NAME}-client`, '-o', 'json'])) as
      { items: Array<{ endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> }> };
    const ready = slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses).sort();
    expect(ready).to.deep.equal(pods.map((p) => p.status!.podIP!).sort());
    for (const ip of ready) expect(await getJson(`http://${ip}:2379/health`)).to.include({ health: 'true' });
    // with pods running: no default route in any pod, nothing routed or masqueraded on the host
    await tb.node.checkNetwork('with svc members running');
  });

  it('pods reach each other and the API only over the bridge: no default route inside a member', async () => {
    const routes = await tb.kubectl(['-n', NS, 'exec', `${NAME}-0`, '--', 'cat', '/proc/net/route']);
    // /proc/net/route: destination 00000000 would be a default route
    const dests = routes.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[1]);
    expect(dests).to.not.include('00000000');
    const resolv = await tb.kubectl(['-n', NS, 'exec', `${NAME}-0`, '--', 'cat', '/etc/resolv.conf']);
    expect(resolv).to.contain(`nameserver ${POD_NET.hostIp}`);
  });

  it('a deleted member comes back with its data and rejoins', async () => {
    await tb.kubectl(['-n', NS, 'delete', 'pod', `${NAME}-1`, '--wait=true']);
    await tb.kubectl(['-n', NS, 'rollout', 'status', `statefulset/${NAME}`, '--timeout=120s']);
    await waitFor('kv-1 healthy', async () =>
      (await getJson(`http://${NAME}-1.${PEERS}.${NS}.svc:2379/health`)).health === 'true' ? true : undefined, 60_000);
    const got = await getJson(`http://${NAME}-1.${PEERS}.${NS}.svc:2379/v3/kv/range`, { key: b64('k8s'), serializable: true });
    expect(Buffer.from((got.kvs as { value: string }[])[0].value, 'base64').toString()).to.equal('works');
  });
});
