// Leader election of svc-operator replicas on a real Lease: one candidate leads, the other waits; a released
// lease passes at once, an abandoned one after its duration.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { LeaderElector } from '../../operator/controller/leader.js';
import { sharedTestbed } from './fixture.js';
import { waitFor } from '../../harness/process.js';

describe('k8s: operator leader election', function () {
  this.timeout(60_000);
  let kc: k8s.KubeConfig;
  before(async () => {
    const tb = await sharedTestbed();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
  });

  const candidate = (identity: string, name: string) => new LeaderElector(kc, { namespace: 'default', name, identity, leaseDurationSeconds: 3, retryMs: 200 });

  it('one candidate leads; the other takes over when the leader releases the lease', async () => {
    const a = candidate('a', 'svc-operator-test-release');
    const b = candidate('b', 'svc-operator-test-release');
    await a.acquire(() => undefined);
    expect(a.leading).to.equal(true);
    const bLost: string[] = [];
    const bDone = b.acquire(() => bLost.push('lost'));
    // a renews every 200 ms: b keeps waiting, well past the lease duration
    await new Promise((r) => setTimeout(r, 4000));
    expect(b.leading).to.equal(false);
    await a.release();
    await bDone;
    expect(b.leading).to.equal(true);
    expect(await candidate('c', 'svc-operator-test-release').tryAcquire()).to.equal(false);
    await b.release();
    expect(bLost).to.deep.equal([]);
  });

  it('a lease its holder stopped renewing is taken over after its duration', async () => {
    const a = candidate('a', 'svc-operator-test-expire');
    expect(await a.tryAcquire()).to.equal(true); // acquired once, never renewed
    const b = candidate('b', 'svc-operator-test-expire');
    expect(await b.tryAcquire()).to.equal(false);
    await waitFor('b to take the expired lease', async () => ((await b.tryAcquire()) ? true : undefined), 20_000, 250);
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await api.readNamespacedLease({ namespace: 'default', name: 'svc-operator-test-expire' });
    expect(lease.spec).to.include({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.release();
  });
});
