// Leases: a TTL with attached keys; revoking a lease deletes its keys in one write txn. Only the primary
// (the raft leader's lessor) tracks expiry; followers keep every lease alive until they are promoted.
// There are no timers in here: time comes from an injected clock, expiry is polled with expired(nowMs),
// and the server turns expired leases into revoke proposals through consensus (as the reference does).
import type { Logger } from '../log/logger.js';
import { nopLogger } from '../log/logger.js';
import type { Backend } from '../storage/backend.js';
import { MvccError } from './errors.js';
import type { LeaseHooks, WriteTxn } from './kvstore.js';
import { keyStr, strKey } from './kv.js';

const LEASE_BUCKET = 'lease';
/** The largest TTL a lease may have, in seconds (reference MaxLeaseTTL). */
export const MAX_LEASE_TTL = 9_000_000_000;
/** Revokes per second the primary aims for when spreading expiries on promotion (reference leaseRevokeRate). */
const LEASE_REVOKE_RATE = 1000;
const DEFAULT_EXPIRED_RETRY_MS = 3000;

/** The minimum TTL for an election timeout: ceil(1.5 x election timeout) in seconds, as the reference. */
export function minLeaseTtlFor(electionTimeoutMs: number): number {
  return Math.ceil((3 * electionTimeoutMs) / 2 / 1000);
}

/** A lease as the server reads it. */
export interface LeaseInfo {
  id: bigint;
  /** Granted TTL in seconds (after raising to the minimum). */
  ttl: number;
  /** Checkpointed remaining TTL in seconds (0: none). */
  remainingTtl: number;
  /** Absolute expiry in ms of the injected clock; Infinity when not tracked (not primary). */
  expiryMs: number;
  keys: Uint8Array[];
}

export interface TimeToLive {
  id: bigint;
  /** Seconds left (truncated), or -1 when expiry is not tracked here (not primary). */
  ttl: number;
  grantedTtl: number;
  keys?: Uint8Array[];
}

export interface LessorOptions {
  logger?: Logger;
  /** Minimum TTL in seconds (default 2, i.e. minLeaseTtlFor(1000)). */
  minTtl?: number;
  /** The clock (ms); default Date.now. Only used to stamp expiries on grant/renew/promote. */
  clock?: () => number;
  /** How long after reporting an expired lease to report it again if it is still there (default 3000). */
  expiredRetryMs?: number;
}

class Lease {
  readonly items = new Set<string>();
  expiryMs = Infinity;
  /** When an expired lease was last reported, so it is not reported every poll. */
  reportedAtMs = -Infinity;

  constructor(
    readonly id: bigint,
    public ttl: number,
    public remainingTtl = 0,
  ) {}

  /** Sets the expiry to now + extend + (remaining or full) TTL. */
  refresh(nowMs: number, extendMs: number): void {
    const secs = this.remainingTtl > 0 ? this.remainingTtl : this.ttl;
    this.expiryMs = nowMs + extendMs + secs * 1000;
  }
}

function idKey(id: bigint): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, id));
  return b;
}

function encodeLease(l: Lease): Uint8Array {
  const b = Buffer.alloc(24);
  b.writeBigInt64BE(BigInt.asIntN(64, l.id), 0);
  b.writeBigInt64BE(BigInt(l.ttl), 8);
  b.writeBigInt64BE(BigInt(l.remainingTtl), 16);
  return b;
}

function decodeLease(v: Uint8Array): Lease {
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return new Lease(b.readBigInt64BE(0), Number(b.readBigInt64BE(8)), Number(b.readBigInt64BE(16)));
}

/** The lease manager of one member. */
export class Lessor implements LeaseHooks {
  private backend: Backend;
  private leaseMap = new Map<bigint, Lease>();
  private itemMap = new Map<string, bigint>();
  private primary = false;
  private rangeDeleter: (() => WriteTxn) | undefined;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly retryMs: number;
  readonly minTtl: number;

  constructor(backend: Backend, opts: LessorOptions = {}) {
    this.backend = backend;
    this.logger = opts.logger ?? nopLogger;
    this.clock = opts.clock ?? Date.now;
    this.retryMs = opts.expiredRetryMs ?? DEFAULT_EXPIRED_RETRY_MS;
    this.minTtl = opts.minTtl ?? minLeaseTtlFor(1000);
    this.recover();
  }

  /** Sets how revoke deletes keys (the MvccStore calls this with its write()). */
  setRangeDeleter(fn: () => WriteTxn): void {
    this.rangeDeleter = fn;
  }

  isPrimary(): boolean {
    return this.primary;
  }

  /** Creates a lease; ttl is raised to the minimum TTL. */
  grant(id: bigint, ttl: number): LeaseInfo {
    if (id === 0n) throw new MvccError('LEASE_NOT_FOUND');
    if (ttl > MAX_LEASE_TTL) throw new MvccError('LEASE_TTL_TOO_LARGE');
    if (this.leaseMap.has(id)) throw new MvccError('LEASE_EXISTS');
    const l = new Lease(id, Math.max(ttl, this.minTtl));
    if (this.primary) l.refresh(this.clock(), 0);
    this.leaseMap.set(id, l);
    this.persist(l);
    return this.info(l);
  }

  /** Deletes the lease and every key attached to it, in one write txn. */
  revoke(id: bigint): void {
    const l = this.leaseMap.get(id);
    if (!l) throw new MvccError('LEASE_NOT_FOUND');
    const keys = [...l.items].sort();
    const txn = this.rangeDeleter?.();
    try {
      for (const k of keys) txn?.deleteRange(strKey(k));
      this.leaseMap.delete(id);
      for (const k of l.items) this.itemMap.delete(k);
      const tx = this.backend.batchTx();
      tx.delete(LEASE_BUCKET, idKey(id));
    } finally {
      if (txn) txn.end();
      else this.backend.batchTx().end();
    }
  }

  /** Refreshes the lease's expiry; returns its TTL in seconds. Primary only. */
  renew(id: bigint): number {
    if (!this.primary) throw new MvccError('NOT_PRIMARY');
    const l = this.leaseMap.get(id);
    if (!l) throw new MvccError('LEASE_NOT_FOUND');
    // An expired lease is being revoked; renewing it would race with that.
    if (l.expiryMs <= this.clock()) throw new MvccError('LEASE_NOT_FOUND');
    if (l.remainingTtl > 0) {
      l.remainingTtl = 0;
      this.persist(l);
    }
    l.refresh(this.clock(), 0);
    return l.ttl;
  }

  /** Records a checkpointed remaining TTL (applied through consensus). */
  checkpoint(id: bigint, remainingTtl: number): void {
    const l = this.leaseMap.get(id);
    if (!l) return;
    l.remainingTtl = remainingTtl;
    this.persist(l);
    if (this.primary) l.refresh(this.clock(), 0);
  }

  exists(id: bigint): boolean {
    return this.leaseMap.has(id);
  }

  lookup(id: bigint): LeaseInfo | undefined {
    const l = this.leaseMap.get(id);
    return l ? this.info(l) : undefined;
  }

  /** Every lease, ordered by id. */
  leases(): LeaseInfo[] {
    return [...this.leaseMap.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((l) => this.info(l));
  }

  /** TimeToLive as the reference's server computes it; keys included on request. */
  timeToLive(id: bigint, withKeys = false): TimeToLive {
    const l = this.leaseMap.get(id);
    if (!l) throw new MvccError('LEASE_NOT_FOUND');
    const remaining = l.expiryMs === Infinity ? -1 : Math.max(0, Math.floor((l.expiryMs - this.clock()) / 1000));
    const out: TimeToLive = { id, ttl: remaining, grantedTtl: l.ttl };
    if (withKeys) out.keys = [...l.items].sort().map(strKey);
    return out;
  }

  leaseOf(key: string): bigint {
    return this.itemMap.get(key) ?? 0n;
  }

  /** The lease of a key given as bytes (0n: none). */
  leaseOfKey(key: Uint8Array): bigint {
    return this.leaseOf(keyStr(key));
  }

  attach(id: bigint, key: string): void {
    const l = this.leaseMap.get(id);
    if (!l) throw new MvccError('LEASE_NOT_FOUND');
    l.items.add(key);
    this.itemMap.set(key, id);
  }

  detach(id: bigint, key: string): void {
    const l = this.leaseMap.get(id);
    if (!l) return;
    l.items.delete(key);
    if (this.itemMap.get(key) === id) this.itemMap.delete(key);
  }

  /**
   * Becomes primary: every lease's expiry restarts at now + extendMs + TTL. When many leases would expire
   * in the same second, later ones are pushed back so revokes stay under the revoke rate.
   */
  promote(extendMs: number): void {
    this.primary = true;
    const now = this.clock();
    for (const l of this.leaseMap.values()) l.refresh(now, extendMs);
    const leases = [...this.leaseMap.values()];
    if (leases.length < LEASE_REVOKE_RATE) return;
    leases.sort((a, b) => a.expiryMs - b.expiryMs);
    const target = (3 * LEASE_REVOKE_RATE) / 4;
    let baseWindow = leases[0].expiryMs - now;
    let nextWindow = baseWindow + 1000;
    let expires = 0;
    for (const l of leases) {
      const remaining = l.expiryMs - now;
      if (remaining > nextWindow) {
        baseWindow = remaining;
        nextWindow = baseWindow + 1000;
        expires = 1;
        continue;
      }
      expires++;
      if (expires <= target) continue;
      const delay = 1000 * (expires / target) - (remaining - baseWindow);
      nextWindow = baseWindow + delay;
      l.refresh(now, delay + extendMs);
    }
  }

  /** Stops tracking expiry (no longer the leader). */
  demote(): void {
    this.primary = false;
    for (const l of this.leaseMap.values()) {
      l.expiryMs = Infinity;
      l.reportedAtMs = -Infinity;
    }
  }

  /**
   * Leases past their expiry at nowMs, oldest first, at most limit; a lease reported once is reported
   * again only after the retry interval (in case its revoke proposal got lost). Primary only.
   */
  expired(nowMs: number, limit = Infinity): bigint[] {
    if (!this.primary) return [];
    const due = [...this.leaseMap.values()]
      .filter((l) => l.expiryMs <= nowMs && nowMs - l.reportedAtMs >= this.retryMs)
      .sort((a, b) => a.expiryMs - b.expiryMs);
    const out: bigint[] = [];
    for (const l of due) {
      if (out.length >= limit) break;
      l.reportedAtMs = nowMs;
      out.push(l.id);
    }
    return out;
  }

  /** Reloads every lease from the backend (after open or a snapshot); keys are reattached by the store. */
  recover(backend?: Backend): void {
    if (backend) this.backend = backend;
    this.leaseMap.clear();
    this.itemMap.clear();
    this.backend.readTx().forEach(LEASE_BUCKET, (_k, v) => {
      const l = decodeLease(v);
      if (this.primary) l.refresh(this.clock(), 0);
      this.leaseMap.set(l.id, l);
    });
    this.logger.debug('recovered leases', { count: this.leaseMap.size });
  }

  private persist(l: Lease): void {
    const tx = this.backend.batchTx();
    tx.put(LEASE_BUCKET, idKey(l.id), encodeLease(l));
    tx.end();
  }

  private info(l: Lease): LeaseInfo {
    return {
      id: l.id,
      ttl: l.ttl,
      remainingTtl: l.remainingTtl,
      expiryMs: l.expiryMs,
      keys: [...l.items].sort().map(strKey),
    };
  }
}
