// The v3 state machine: applies committed v3 requests to the multi-version store (and the lessor and auth store
// beside it), and serves local reads from it. Everything here is synchronous and deterministic: the same entries applied in the same order give every member the same
// store, which is what makes HashKV agree across members.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { openBackend, type Backend, type BackendOptions } from '../storage/backend.js';
import { MvccStore, type MvccStoreOptions, type ReadTxn, type WriteTxn } from '../mvcc/kvstore.js';
import { Lessor, minLeaseTtlFor } from '../mvcc/lessor.js';
import { WatchableStore } from '../mvcc/watchable-store.js';
import { MvccError } from '../mvcc/errors.js';
import { evaluateCompareOn } from '../mvcc/compare.js';
import type { KeyValue } from '../mvcc/kv.js';
import { Errors, ServerError } from './errors.js';
import { AuthStore } from '../auth/store.js';
import { checkTxnKeys } from '../auth/txn-keys.js';
import type { JwtTokens, TokenInfo } from '../auth/tokens.js';
import type { DeleteRangeRequest, InternalRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from './requests.js';
import type { Logger } from '../log/logger.js';
import { packageLogger } from '../log/create-logger.js';

const EMPTY = Buffer.alloc(0);

export interface RangeResult {
  revision: number;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export interface PutResult {
  revision: number;
  prevKv?: KeyValue;
}

export interface DeleteResult {
  revision: number;
  deleted: number;
  prevKvs: KeyValue[];
}

export type OpResult = { range: RangeResult } | { put: PutResult } | { deleteRange: DeleteResult } | { txn: TxnResult };

export interface TxnResult {
  revision: number;
  succeeded: boolean;
  responses: OpResult[];
}

/** Map the store's errors to the errors clients see. */
function clientError(e: unknown): Error {
  if (e instanceof MvccError) {
    switch (e.code) {
      case 'COMPACTED': return Errors.compacted();
      case 'FUTURE_REV': return Errors.futureRev();
      case 'LEASE_NOT_FOUND': return Errors.leaseNotFound();
      case 'LEASE_EXISTS': return Errors.leaseExist();
      case 'LEASE_TTL_TOO_LARGE': return Errors.leaseTTLTooLarge();
      default: return new ServerError(2, `etcdserver: ${e.message}`);
    }
  }
  return e as Error;
}

export interface StateMachineOptions {
  logger: Logger;
  /** The election timeout: the shortest lease TTL follows from it. */
  electionMs: number;
  unsafeNoFsync?: boolean;
  /** --auth-token jwt,...: the JWT provider (absent: simple tokens). */
  authTokens?: JwtTokens;
  simpleTokenTtlMs?: number;
  compaction?: MvccStoreOptions['compaction'];
  /** --backend-batch-limit / --backend-batch-interval, for a db reopened after a snapshot. */
  backend?: BackendOptions;
}

export class V3StateMachine {
  readonly store: MvccStore;
  readonly lessor: Lessor;
  readonly watchable: WatchableStore;
  readonly auth: AuthStore;

  constructor(
    private backend: Backend,
    private readonly opts: StateMachineOptions,
  ) {
    const logger = packageLogger(opts.logger, 'mvcc');
    this.lessor = new Lessor(this.backend, { logger, minTtl: minLeaseTtlFor(opts.electionMs) });
    this.store = new MvccStore(this.backend, { logger, lessor: this.lessor, compaction: opts.compaction });
    this.watchable = new WatchableStore(this.store);
    this.auth = new AuthStore(this.backend, opts.authTokens, opts.simpleTokenTtlMs);
  }

  get stats() {
    const s = this.store.stats;
    return { put: s.putTotal, delete: s.deleteTotal, txn: s.txnTotal, range: s.rangeTotal };
  }

  rev(): number {
    return this.store.rev();
  }

  compactRev(): number {
    return Math.max(0, this.store.compactRev());
  }

  keyCount(): number {
    return this.store.stats.keysTotal;
  }

  consistentIndex(): number {
    return this.backend.consistentIndex();
  }

  /** The term of the entry at the consistent index (0 when the db predates terms). */
  consistentTerm(): number {
    return this.backend.consistentTerm();
  }

  /** The db the store lives in (replaced when a snapshot arrives). */
  currentBackend(): Backend {
    return this.backend;
  }

  // ------------------------------------------------------------------------------------------- apply

  /**
   * Apply one committed request, the entry at log index `index` of term `term` (both recorded with the data, as
   * the reference's consistent index). Errors are the client's answer, not a failure.
   */
  apply(req: InternalRequest, index: number, term: number): unknown {
    this.backend.setConsistentIndex(index, term);
    try {
      this.checkAuth(req);
      switch (req.kind) {
        case 'put': return this.applyPut(req.put);
        case 'deleteRange': return this.writeOne((w) => this.deleteIn(w, req.deleteRange));
        case 'txn': return this.applyTxnLike(req.txn, (r) => r);
        case 'compaction': {
          // Reads below the revision fail at once; the old revisions leave the db in the background.
          const { done } = this.store.compact(req.compaction.revision);
          return { revision: this.store.rev(), done };
        }
        case 'leaseGrant': {
          const l = this.lessor.grant(req.leaseGrant.id, req.leaseGrant.ttl);
          if (this.lessor.isPrimary()) this.lessor.renew(l.id);
          return { id: l.id, ttl: l.ttl };
        }
        case 'leaseRevoke':
          this.lessor.revoke(req.leaseRevoke.id);
          return { revision: this.store.rev() };
        case 'auth':
          this.auth.apply(req.auth);
          return { revision: this.store.rev() };
        default:
          return undefined;
      }
    } catch (e) {
      throw clientError(e);
    } finally {
      this.backend.batchTx().end();
    }
  }

  /** An entry refused at apply (the CORRUPT alarm) still moves the consistent index. */
  markApplied(index: number, term: number): void {
    this.backend.setConsistentIndex(index, term);
    this.backend.batchTx().end();
  }

  /**
   * The permissions again, at apply, for a request proposed on a client's behalf (it carries a header), as the
   * reference's auth applier: users, roles or permissions changed since the request passed the gate make it fail
   * ("revision of auth store is old", or permission denied for admin calls) and nothing is written.
   */
  private checkAuth(req: InternalRequest): void {
    const h = req.header;
    if (!h || !this.auth.enabled) return;
    const info = { username: h.username, revision: h.authRevision };
    switch (req.kind) {
      case 'put': {
        const key = Buffer.from(req.put.key);
        this.auth.checkKeys(info, key, EMPTY, true);
        this.checkLeaseKeys(info, req.put.lease);
        if (req.put.prevKv) this.auth.checkKeys(info, key, EMPTY, false);
        return;
      }
      case 'deleteRange': {
        const d = req.deleteRange;
        this.auth.checkKeys(info, Buffer.from(d.key), Buffer.from(d.rangeEnd), true);
        if (d.prevKv) this.auth.checkKeys(info, Buffer.from(d.key), Buffer.from(d.rangeEnd), false);
        return;
      }
      case 'txn':
        checkTxnKeys(this.auth, info, req.txn);
        return;
      case 'leaseRevoke':
        this.checkLeaseKeys(info, req.leaseRevoke.id);
        return;
      case 'auth':
        if (req.auth.op !== 'authenticate') this.auth.checkAdmin(h.username);
        return;
      default:
        return;
    }
  }

  /**
   * A user revokes a lease, or attaches a key to it, only if it may write every key already attached (as the
   * reference: else revoking would delete keys it may not write). Admins may; an unknown lease is not checked.
   */
  private checkLeaseKeys(info: TokenInfo, id: bigint): void {
    if (id === 0n) return;
    const lease = this.lessor.lookup(id);
    if (!lease || this.auth.isAdmin(info.username)) return;
    for (const k of lease.keys) this.auth.checkKeys(info, Buffer.from(k), EMPTY, true);
  }

  private applyTxnLike<T>(t: TxnRequest, shape: (r: TxnResult) => T): T {
    const w = this.store.write();
    let res: TxnResult;
    try {
      // As the reference: every compare (nested ones too) is evaluated against the state before the txn, and only
      // the ops on that path are checked and run.
      const path = txnPath(w, t);
      this.checkLeases(t, [...path]);
      res = this.execTxn(w, t, path);
    } finally {
      w.end();
    }
    this.fillRevision(res, this.store.rev());
    return shape(res);
  }

  /** A lone put: what a txn of that one put does (its lease checked first), without the txn's path and results. */
  private applyPut(p: PutRequest): PutResult {
    if (p.lease !== 0n && !p.ignoreLease && !this.lessor.exists(p.lease)) throw Errors.leaseNotFound();
    return this.writeOne((w) => this.putIn(w, p));
  }

  /** One op in its own write txn; its result gets the revision after it. */
  private writeOne<R extends { revision: number }>(op: (w: WriteTxn) => R): R {
    const w = this.store.write();
    let res: R;
    try {
      res = op(w);
    } finally {
      w.end();
    }
    res.revision = this.store.rev();
    return res;
  }

  /** Every lease a put on the txn's path names must exist before anything is written (all or nothing). */
  private checkLeases(t: TxnRequest, path: boolean[]): void {
    const ops = path.shift() ? t.success : t.failure;
    for (const op of ops) {
      if ('put' in op && op.put.lease !== 0n && !op.put.ignoreLease && !this.lessor.exists(op.put.lease)) throw Errors.leaseNotFound();
      if ('txn' in op) this.checkLeases(op.txn, path);
    }
  }

  /** Runs the txn along `path` (from txnPath; consumed). */
  private execTxn(w: WriteTxn | ReadTxn, t: TxnRequest, path: boolean[]): TxnResult {
    const succeeded = path.shift()!;
    const ops = succeeded ? t.success : t.failure;
    return { revision: 0, succeeded, responses: ops.map((op) => this.execOp(w, op, path)) };
  }

  private execOp(w: WriteTxn | ReadTxn, op: RequestOp, path: boolean[]): OpResult {
    if ('range' in op) return { range: this.rangeIn(w, op.range) };
    if ('txn' in op) return { txn: this.execTxn(w, op.txn, path) };
    const wt = w as WriteTxn;
    if ('put' in op) return { put: this.putIn(wt, op.put) };
    return { deleteRange: this.deleteIn(wt, op.deleteRange) };
  }

  private putIn(w: WriteTxn, p: PutRequest): PutResult {
    let value = p.value;
    let lease = p.lease;
    if (p.ignoreValue || p.ignoreLease) {
      const prev = w.range(p.key, undefined, {}).kvs[0];
      if (!prev) throw new ServerError(3, 'etcdserver: key not found');
      if (p.ignoreValue) value = prev.value;
      if (p.ignoreLease) lease = prev.lease;
    }
    const prevKv = w.put(p.key, value, lease, p.prevKv);
    return { revision: 0, prevKv: p.prevKv ? prevKv : undefined };
  }

  private deleteIn(w: WriteTxn, d: DeleteRangeRequest): DeleteResult {
    const deleted = w.deleteRange(d.key, d.rangeEnd.length > 0 ? d.rangeEnd : undefined);
    return { revision: 0, deleted: deleted.length, prevKvs: d.prevKv ? deleted : [] };
  }

  private rangeIn(t: ReadTxn, r: RangeRequest): RangeResult {
    const filtered = r.minModRevision > 0 || r.maxModRevision > 0 || r.minCreateRevision > 0 || r.maxCreateRevision > 0;
    let order = r.sortOrder;
    if (order === 'NONE' && r.sortTarget !== 'KEY') order = 'ASCEND';
    const sorting = order !== 'NONE' && !(order === 'ASCEND' && r.sortTarget === 'KEY');
    const limit = sorting || filtered || r.limit <= 0 ? 0 : r.limit + 1;
    const res = t.range(r.key, r.rangeEnd.length > 0 ? r.rangeEnd : undefined, { limit, rev: r.revision, countOnly: r.countOnly, keysOnly: r.keysOnly });
    let kvs = res.kvs;
    if (filtered) {
      kvs = kvs.filter((kv) =>
        (r.minModRevision <= 0 || kv.modRevision >= r.minModRevision) &&
        (r.maxModRevision <= 0 || kv.modRevision <= r.maxModRevision) &&
        (r.minCreateRevision <= 0 || kv.createRevision >= r.minCreateRevision) &&
        (r.maxCreateRevision <= 0 || kv.createRevision <= r.maxCreateRevision));
    }
    if (sorting) kvs = sortKvs(kvs, r.sortTarget, order === 'DESCEND');
    let more = false;
    if (r.limit > 0 && kvs.length > r.limit) {
      kvs = kvs.slice(0, r.limit);
      more = true;
    }
    return { revision: res.rev, kvs, more, count: res.count };
  }

  private fillRevision(r: TxnResult, rev: number): void {
    r.revision = rev;
    for (const x of r.responses) {
      if ('put' in x) x.put.revision = rev;
      else if ('deleteRange' in x) x.deleteRange.revision = rev;
      else if ('range' in x) x.range.revision = rev;
      else this.fillRevision(x.txn, rev);
    }
  }

  // ------------------------------------------------------------------------------------------- reads

  range(r: RangeRequest): RangeResult {
    const t = this.store.read();
    try {
      return this.rangeIn(t, r);
    } catch (e) {
      throw clientError(e);
    } finally {
      t.end();
    }
  }

  readOnlyTxn(txn: TxnRequest): TxnResult {
    const t = this.store.read();
    try {
      const res = this.execTxn(t, txn, txnPath(t, txn));
      this.fillRevision(res, t.rev());
      return res;
    } catch (e) {
      throw clientError(e);
    } finally {
      t.end();
    }
  }

  hash(): number {
    return this.store.hash().hash;
  }

  hashKV(rev: number): { hash: number; revision: number; compactRevision: number } {
    try {
      const h = this.store.hashByRev(rev);
      return { hash: h.hash, revision: h.currentRev, compactRevision: h.compactRev };
    } catch (e) {
      throw clientError(e);
    }
  }

  /** Renew a lease this member's lessor tracks (the leader's). Resolves with the TTL. */
  renewLease(id: bigint): number {
    try {
      return this.lessor.renew(id);
    } catch (e) {
      throw clientError(e);
    }
  }

  async defrag(): Promise<void> {
    // A compaction still deleting in the background would free its pages only after the copy: the file would keep
    // its size (and a NOSPACE alarm would come back). Let the scheduled compactions finish first.
    await this.store.compactionsDone();
    await this.backend.defrag();
  }

  forceCommit(): void {
    this.backend.forceCommit();
  }

  /** Replace the db with a snapshot's bytes (from the leader), and rebuild every in-memory view from it. */
  replaceBackend(db: Uint8Array): Backend {
    const path = this.backend.path;
    this.backend.close();
    const tmp = `${path}.incoming.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, db);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    const { onCommit, onFailure } = this.backend;
    this.backend = openBackend(this.opts.logger, path, { unsafeNoFsync: this.opts.unsafeNoFsync, ...this.opts.backend });
    Object.assign(this.backend, { onCommit, onFailure });
    this.lessor.recover(this.backend);
    // Restoring the watchable store restores the kv store under it.
    this.watchable.restore(this.backend);
    this.auth.load(this.backend);
    return this.backend;
  }

  close(): void {
    this.watchable.close();
    this.backend.close();
  }
}

const textTarget = (kv: KeyValue, target: RangeRequest['sortTarget']): number | Buffer => {
  switch (target) {
    case 'VERSION': return kv.version;
    case 'CREATE': return kv.createRevision;
    case 'MOD': return kv.modRevision;
    case 'VALUE': return Buffer.from(kv.value);
    default: return Buffer.from(kv.key);
  }
};

function sortKvs(kvs: KeyValue[], target: RangeRequest['sortTarget'], desc: boolean): KeyValue[] {
  const sorted = [...kvs].sort((a, b) => {
    const x = textTarget(a, target);
    const y = textTarget(b, target);
    const c = typeof x === 'number' ? x - (y as number) : Buffer.compare(x, y as Buffer);
    return c !== 0 ? c : Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
  });
  return desc ? sorted.reverse() : sorted;
}

/** Which branch each txn takes, nested ones included, in depth-first order, all judged on the state before the txn. */
function txnPath(r: WriteTxn | ReadTxn, t: TxnRequest): boolean[] {
  const succeeded = t.compare.every((c) => evaluateCompareOn(r, c));
  const path = [succeeded];
  for (const op of succeeded ? t.success : t.failure) if ('txn' in op) path.push(...txnPath(r, op.txn));
  return path;
}
