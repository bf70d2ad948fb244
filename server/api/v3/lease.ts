// The Lease service's unary calls (etcdserverpb.Lease; keep-alives are a stream, in streams.ts).
import type { LeaseReads, Proposals, QuotaGuard, ReadBarrier } from '../../core/interfaces.js';
import type { AuthGate } from './auth-gate.js';
import type { Headers } from './headers.js';
import type { LeaseService } from './service-methods.js';

export interface LeaseDeps {
  leases: LeaseReads;
  barrier: ReadBarrier;
  proposals: Proposals;
  quota: QuotaGuard;
  headers: Headers;
  gate: AuthGate;
}

export function leaseService(d: LeaseDeps): LeaseService {
  const { proposals, headers } = d;
  return {
    LeaseGrant: async (req) => {
      const refused = d.quota.checkQuota(0);
      if (refused) await refused;
      let id = BigInt(req.ID ?? 0);
      if (id === 0n) id = proposals.nextRequestId() & 0x7fffffffffffffffn;
      const ttl = Number(req.TTL ?? 0);
      const res = await proposals.propose<{ id: bigint; ttl: number }>({ id: proposals.nextRequestId(), kind: 'leaseGrant', leaseGrant: { id, ttl } });
      return { header: headers.header(), ID: res.id.toString(), TTL: res.ttl, error: '' };
    },

    LeaseRevoke: async (req, meta) => {
      const id = BigInt(req.ID ?? 0);
      // Checked when applied, as the reference: the caller must be allowed to write every attached key.
      await proposals.propose({ id: proposals.nextRequestId(), header: d.gate.header(meta), kind: 'leaseRevoke', leaseRevoke: { id } });
      return { header: headers.header() };
    },

    LeaseTimeToLive: async (req, meta) => {
      await d.barrier.linearizableReadNotify();
      const id = BigInt(req.ID ?? 0);
      // The attached keys are shown only to a user who may read every one of them (as the reference); a call
      // without a valid user is refused first, whether or not the lease exists.
      if (req.keys) d.gate.user(meta);
      const t = await d.leases.leaseTimeToLive(id, !!req.keys);
      if (req.keys) d.gate.requireEachKey(meta, t?.keys ?? []);
      if (!t) return { header: headers.header(), ID: id.toString(), TTL: -1, grantedTTL: 0, keys: [] };
      return { header: headers.header(), ID: id.toString(), TTL: t.ttl, grantedTTL: t.grantedTtl, keys: t.keys };
    },

    LeaseLeases: async () => {
      await d.barrier.linearizableReadNotify();
      return { header: headers.header(), leases: d.leases.leaseIds().map((id) => ({ ID: id.toString() })) };
    },
  };
}
