// Lease forwarding: only the leader tracks lease expiry, so a follower asks it (over the peer URL) to renew a
// lease or tell its remaining time; the leader's side answers those calls and revokes expired leases.
import type { Member } from '../cluster/membership.js';
import type { Lessor } from '../mvcc/lessor.js';
import type { Logger } from '../log/logger.js';
import { Errors, ServerError } from './errors.js';
import type { LeaseReads, LeaseTtl, Proposals } from './interfaces.js';
import type { Lifecycle } from './lifecycle.js';

/** A POST to a peer URL; resolves with the status and body (rejects when the peer cannot be reached). */
export type PeerPost = (url: string, body: string, timeoutMs: number) => Promise<{ status: number; body: string }>;

export interface LeaseForwarderDeps {
  lessor: Pick<Lessor, 'exists' | 'timeToLive' | 'leases' | 'expired' | 'renew'>;
  /** Renew a lease in this member's lessor (the leader's), with the errors clients see. */
  renewLocal(id: bigint): number;
  /** The current leader (0n: none). */
  leader(): bigint;
  isLeader(): boolean;
  member(id: bigint): Member | undefined;
  proposals: Proposals;
  requestTimeoutMs(): number;
  post: PeerPost;
  logger: Logger;
  lifecycle: Lifecycle;
}

export class LeaseForwarder implements LeaseReads {
  constructor(private readonly d: LeaseForwarderDeps) {}

  /** Lease calls only the leader can answer (it alone tracks expiry); a follower asks it over the peer URL. */
  async forwardCall<T>(op: 'renew' | 'ttl', body: object): Promise<T> {
    const lead = this.d.leader();
    const leader = this.d.member(lead);
    if (lead === 0n || !leader) throw Errors.noLeader();
    let lastErr: Error = Errors.noLeader();
    for (const u of leader.peerURLs) {
      try {
        const res = await this.d.post(new URL(`/leases/${op}`, u).toString(), JSON.stringify(body), this.d.requestTimeoutMs());
        const j = JSON.parse(res.body) as T & { error?: string };
        if (res.status === 404) throw Errors.leaseNotFound();
        if (res.status !== 200) throw new ServerError(14, j.error ?? `etcdserver: lease ${op} failed (${res.status})`);
        return j;
      } catch (e) {
        if (e instanceof ServerError) throw e;
        lastErr = e as Error;
      }
    }
    throw lastErr;
  }

  /** Keep a lease alive: the leader renews it; a follower asks the leader. Resolves with the TTL. */
  async renew(id: bigint): Promise<number> {
    if (this.d.isLeader()) return this.d.renewLocal(id);
    return (await this.forwardCall<{ ttl: number }>('renew', { id: id.toString() })).ttl;
  }

  async leaseTimeToLive(id: bigint, keys: boolean): Promise<LeaseTtl | undefined> {
    const lessor = this.d.lessor;
    if (!lessor.exists(id)) return undefined;
    if (!this.d.isLeader()) {
      // Only the leader tracks expiry: ask it for the remaining time.
      try {
        const t = await this.forwardCall<{ ttl: number; grantedTtl: number; keys: string[] }>('ttl', { id: id.toString(), keys });
        return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys.map((k) => Buffer.from(k, 'base64')) };
      } catch (e) {
        if ((e as Error).message === Errors.leaseNotFound().message) return undefined;
        throw e;
      }
    }
    const t = lessor.timeToLive(id, keys);
    return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys ?? [] };
  }

  leaseIds(): bigint[] {
    return this.d.lessor.leases().map((l) => l.id);
  }

  /** The leader's side of forwardCall. */
  callForPeer(op: string, body: string): { status: number; json: object } {
    if (!this.d.isLeader()) return { status: 503, json: { error: Errors.notLeader().message } };
    const lessor = this.d.lessor;
    try {
      const req = JSON.parse(body) as { id: string; keys?: boolean };
      const id = BigInt(req.id);
      if (op === 'renew') return { status: 200, json: { ttl: lessor.renew(id) } };
      if (op === 'ttl') {
        if (!lessor.exists(id)) return { status: 404, json: { error: Errors.leaseNotFound().message } };
        const t = lessor.timeToLive(id, !!req.keys);
        return { status: 200, json: { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: (t.keys ?? []).map((k) => Buffer.from(k).toString('base64')) } };
      }
      return { status: 404, json: { error: `unknown lease call ${op}` } };
    } catch (e) {
      return { status: 404, json: { error: (e as Error).message } };
    }
  }

  /** The leader revokes expired leases through the log (a few per round). */
  revokeExpired(): void {
    const { d } = this;
    if (!d.isLeader() || d.lifecycle.stopped || d.lifecycle.stopping) return;
    for (const id of d.lessor.expired(Date.now()).slice(0, 16)) {
      d.proposals.propose({ id: d.proposals.nextRequestId(), kind: 'leaseRevoke', leaseRevoke: { id } }).catch((e) => {
        d.logger.warn('failed to revoke an expired lease', { 'lease-id': id.toString(16), error: (e as Error).message });
      });
    }
  }
}
