// The network rule for images, made structural: the node's containerd sends a pull for every registry to a loopback
// endpoint that refuses (node/network.ts REFUSING_REGISTRY, a `_default` hosts.toml), so a pod naming an image that
// was not imported fails at once with ErrImagePull and no pull leaves the machine; imported images run as before.
import { connect } from 'node:net';
import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../harness/process.js';
import { sharedTestbed } from './fixture.js';
import { RESTRICTED_CONTAINER, RESTRICTED_POD, createRestrictedNamespace } from './namespaces.js';
import { REFUSING_REGISTRY } from './node/network.js';
import { removeNamespace } from './operator/helpers.js';
import type { Testbed } from './testbed.js';

const NS = 'image-pulls';
const FOREIGN = 'registry.k8s.io/pause:3.10';

/** Resolves the error code of a TCP connection to host:port ('' if it connected). */
function connectError(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => { s.destroy(); resolve(''); });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('k8s testbed: no image pull leaves the machine', function () {
  this.timeout(120_000);
  let tb: Testbed;
  const pod = (name: string, image: string, command?: string[]) => JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: { securityContext: RESTRICTED_POD, terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image, imagePullPolicy: 'IfNotPresent', command, securityContext: RESTRICTED_CONTAINER }] },
  });
  const get = async (name: string): Promise<V1Pod> => JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pod', name, '-o', 'json'])) as V1Pod;

  before(async () => {
    tb = await sharedTestbed();
    await createRestrictedNamespace(tb, NS);
  });
  after(async () => {
    await removeNamespace(tb, NS);
  });

  it(`a pod naming ${FOREIGN} (not imported) fails at once with ErrImagePull from the refusing loopback endpoint; an imported image runs beside it`, async () => {
    const refusing = new URL(REFUSING_REGISTRY);
    expect(await connectError(refusing.hostname, Number(refusing.port)), `nothing may listen on ${refusing.host}`).to.equal('ECONNREFUSED');

    const created = Date.now();
    await tb.kubectl(['apply', '-f', '-'], pod('foreign', FOREIGN));
    await tb.kubectl(['apply', '-f', '-'], pod('imported', tb.images.svc[tb.images.newest], ['node', '-e', 'setInterval(() => {}, 1000)']));

    // the kubelet's Event carries the pull's error: the endpoint it was sent to, and the refusal
    const failed = await waitFor('the pull of the foreign image to fail', async () => {
      const evs = JSON.parse(await tb.kubectl(['-n', NS, 'get', 'events', '--field-selector', 'involvedObject.name=foreign,reason=Failed', '-o', 'json'])) as { items: Array<{ message: string }> };
      return evs.items.find((e) => e.message.includes(FOREIGN));
    }, 60_000, 250);
    expect(Date.now() - created, 'the pull failed at once (no time spent reaching out)').to.be.below(30_000);
    expect(failed.message).to.contain(refusing.host).and.to.contain('connection refused');
    const waiting = await waitFor('the foreign pod waiting on its image', async () => {
      const w = (await get('foreign')).status?.containerStatuses?.[0]?.state?.waiting;
      return w && ['ErrImagePull', 'ImagePullBackOff'].includes(w.reason ?? '') ? w : undefined;
    }, 30_000, 250);
    expect(waiting.reason).to.be.oneOf(['ErrImagePull', 'ImagePullBackOff']);

    await waitFor('the imported image running', async () => ((await get('imported')).status?.phase === 'Running' ? true : undefined), 60_000, 250);
    // nothing was pulled: the node's image store has no such image
    const images = await tb.kubectl(['get', 'node', tb.node.name, '-o', 'jsonpath={.status.images[*].names}']);
    expect(images).to.not.contain(FOREIGN);
    await tb.node.checkNetwork('with a pull refused');
  });
});
