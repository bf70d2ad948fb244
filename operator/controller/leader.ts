// Leader election on a coordination.k8s.io/v1 Lease, as client-go's: the holder renews the lease every
// retry period; another candidate takes it over only once it has not been renewed for the lease duration.
// Updates carry the resourceVersion read, so two candidates never both win the same round.
import * as k8s from '@kubernetes/client-node';
import { isStatus } from '../runtime/kubernetes/kube-api.js';

export interface LeaderElectionOptions {
  namespace: string;
  /** Lease name. Default "svc-operator". */
  name?: string;
  /** This candidate (pod name + random suffix). */
  identity: string;
  /** Default 15 s. */
  leaseDurationSeconds?: number;
  /** Attempt/renew period. Default 2 s. */
  retryMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One candidate. */
export class LeaderElector {
  private readonly api: k8s.CoordinationV1Api;
  private readonly name: string;
  private readonly duration: number;
  private readonly retryMs: number;
  private stopped = false;
  private renewing?: Promise<void>;
  /** True while this candidate holds the lease. */
  leading = false;

  constructor(kc: k8s.KubeConfig, private readonly opts: LeaderElectionOptions) {
    this.api = kc.makeApiClient(k8s.CoordinationV1Api);
    this.name = opts.name ?? 'svc-operator';
    this.duration = opts.leaseDurationSeconds ?? 15;
    this.retryMs = opts.retryMs ?? 2000;
  }

  /** One attempt to take or renew the lease; true when this candidate holds it afterwards. */
  async tryAcquire(): Promise<boolean> {
    const now = new k8s.V1MicroTime();
    const { namespace } = this.opts;
    let lease: k8s.V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ namespace, name: this.name });
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: { metadata: { name: this.name, namespace }, spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: this.duration, acquireTime: now, renewTime: now, leaseTransitions: 0 } },
        });
        return true;
      } catch (e2) {
        if (isStatus(e2, 409)) return false; // another candidate created it first
        throw e2;
      }
    }
    const spec = lease.spec ?? {};
    const mine = spec.holderIdentity === this.opts.identity;
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = !spec.holderIdentity || renewed + (spec.leaseDurationSeconds ?? this.duration) * 1000 < Date.now();
    if (!mine && !expired) return false;
    const next: k8s.V1LeaseSpec = mine
      ? { ...spec, renewTime: now }
      : { holderIdentity: this.opts.identity, leaseDurationSeconds: this.duration, acquireTime: now, renewTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      await this.api.replaceNamespacedLease({ namespace, name: this.name, body: { ...lease, spec: next } });
      return true;
    } catch (e) {
      if (isStatus(e, 409)) return false; // changed since read: someone else renewed or took it
      throw e;
    }
  }

  /**
   * Waits until this candidate leads, then keeps renewing; `onLost` is called once if a renewal fails
   * for longer than the lease duration (the caller must stop acting: another candidate may lead now).
   */
  async acquire(onLost: () => void): Promise<void> {
    while (!this.stopped && !(await this.tryAcquire().catch(() => false))) await sleep(this.retryMs);
    if (this.stopped) return;
    this.leading = true;
    this.renewing = (async () => {
      let lastOk = Date.now();
      while (!this.stopped) {
        await sleep(this.retryMs);
        if (this.stopped) return;
        if (await this.tryAcquire().catch(() => false)) lastOk = Date.now();
        else if (Date.now() - lastOk > this.duration * 1000 - this.retryMs) {
          this.leading = false;
          onLost();
          return;
        }
      }
    })();
  }

  /** Stops renewing and, when leading, releases the lease so another candidate takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    await this.renewing;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ namespace: this.opts.namespace, name: this.name });
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      await this.api.replaceNamespacedLease({ namespace: this.opts.namespace, name: this.name, body: { ...lease, spec: { ...lease.spec, holderIdentity: '', renewTime: undefined } } });
    } catch {
      // it expires by itself
    }
  }
}
