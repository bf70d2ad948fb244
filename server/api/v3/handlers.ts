// The v3 API's unary calls, independent of how they arrive: the gRPC services and the JSON gateway both look a
// method up here by name and call it with a decoded request message. Each service is its own typed module
// (kv.ts, lease.ts, cluster.ts, maintenance.ts, auth.ts) depending only on the core interfaces it needs.
import type { ApiLimits, AuthCore, HeaderFacts, LearnerState, KvMaintenance, KvReads, LeaseReads, MaintenanceCore, MembershipChanges, Observers, Proposals, QuotaGuard, ReadBarrier } from '../../core/interfaces.js';
import type { WatchableStore } from '../../mvcc/watchable-store.js';
import { Errors } from '../../core/errors.js';
import { AuthGate } from './auth-gate.js';
import { authService } from './auth.js';
import { clusterService } from './cluster.js';
import { ConcurrencyApi } from './concurrency.js';
import { Headers } from './headers.js';
import { kvService } from './kv.js';
import { leaseService } from './lease.js';
import { healthService, maintenanceService } from './maintenance.js';
import type { Incoming, Outgoing } from '../../wire/index.js';
import type { AuthService, ClusterService, HandlerOf, HealthService, KvService, LeaseService, MaintenanceService, UnaryHandler, UnaryLookup, UnaryName } from './service-methods.js';

export type { UnaryHandler } from './service-methods.js';

/** What a learner serves, as the reference: its status and serializable reads (it is not in sync with the leader). */
function servedByLearner(method: string, req: object): boolean {
  return method === 'Status' || (method === 'Range' && !!(req as Incoming<'etcdserverpb.RangeRequest'>).serializable);
}

/** What the API needs of the member. */
export interface V3ApiDeps {
  core: HeaderFacts & LearnerState & Proposals & ReadBarrier & QuotaGuard & LeaseReads & MembershipChanges & MaintenanceCore & AuthCore;
  kv: KvReads & KvMaintenance & { readonly watchable: WatchableStore };
  limits: ApiLimits;
  observers: Observers;
}

/** The services, each complete: registration fails to compile when one lacks a method. */
export interface V3Services {
  kv: KvService;
  lease: LeaseService;
  cluster: ClusterService;
  maintenance: MaintenanceService;
  auth: AuthService;
  health: HealthService;
}

export class V3Api implements UnaryLookup {
  readonly gate: AuthGate;
  readonly headers: Headers;
  /** The Election and Lock services. */
  readonly concurrency: ConcurrencyApi;
  readonly services: V3Services;
  private readonly byName = new Map<string, UnaryHandler>();

  constructor(private readonly deps: V3ApiDeps) {
    const { core, kv, limits } = deps;
    this.gate = new AuthGate(() => core.auth);
    this.headers = new Headers(core);
    const common = { barrier: core, proposals: core, gate: this.gate, headers: this.headers };
    this.services = {
      kv: kvService({ ...common, reads: kv, quota: core, maxTxnOps: limits.maxTxnOps }),
      lease: leaseService({ ...common, leases: core, quota: core }),
      cluster: clusterService({ ...common, membership: core }),
      maintenance: maintenanceService({ ...common, core, kv, observers: deps.observers, limits }),
      auth: authService(core, core, limits, this.headers, this.gate),
      health: healthService(core),
    };
    this.concurrency = new ConcurrencyApi(kv, this);
    // Each method under its own name: the callers by name decode its request with that method's type.
    for (const svc of [...Object.values(this.services), this.concurrency.handlers()]) {
      for (const [name, fn] of Object.entries(svc)) this.byName.set(name, fn as UnaryHandler);
    }
  }

  /** The unary handler for a method name (KV, Lease, Cluster, Maintenance, Auth, Health, Election, Lock), if any. */
  handler<M extends UnaryName>(name: M): HandlerOf<M> | undefined;
  handler(name: string): UnaryHandler | undefined;
  handler(name: string): UnaryHandler | undefined {
    // RPCs a release does not have are unknown to it (Unimplemented), whoever implements them.
    const release = this.deps.limits.release;
    if (name === 'AuthStatus' && !release.authStatusRpc) return undefined;
    if (name === 'Downgrade' && !release.downgradeRpc) return undefined;
    const fn = this.byName.get(name);
    if (!fn) return undefined;
    const { core } = this.deps;
    return (req, meta) => (core.isLearner() && !servedByLearner(name, req) ? Promise.reject(Errors.notSupportedForLearner()) : fn(req, meta));
  }

  header(revision?: number): Outgoing<'etcdserverpb.ResponseHeader'> {
    return this.headers.header(revision);
  }
}
