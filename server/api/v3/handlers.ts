// The v3 API's unary calls, independent of how they arrive: the gRPC services and the JSON gateway both call
// these with a decoded request message and send back the message they return.
import type { SvcServer } from '../../core/server.js';
import { Errors, ServerError, Code } from '../../core/errors.js';
import { AuthGate, authHandlers, type RequestMeta } from './auth.js';
import { ConfChangeType } from '../../raft/types.js';
import { computeMemberId, idHex } from '../../cluster/ids.js';
import type { Member } from '../../cluster/membership.js';
import type { TxnRequest, RequestOp, AlarmType } from '../../core/requests.js';
import type { RangeResult, PutResult, DeleteResult, TxnResult, OpResult } from '../../core/apply.js';
import { ConcurrencyApi } from './concurrency.js';
import { deleteFromPb, kvToPb, putFromPb, rangeFromPb, txnFromPb, txnIsReadOnly, type Pb } from './convert.js';

export type UnaryHandler = (req: Pb, meta?: RequestMeta) => Promise<Pb>;

export class V3Api {
  readonly gate: AuthGate;
  private readonly extra: Record<string, UnaryHandler>;
  /** The Election and Lock services. */
  readonly concurrency: ConcurrencyApi;

  constructor(readonly server: SvcServer) {
    this.gate = new AuthGate(server);
    this.concurrency = new ConcurrencyApi(server, this);
    this.extra = { ...authHandlers(server, () => this.header(), this.gate), ...this.concurrency.handlers() };
  }

  /** The unary handler for a method name (KV, Lease, Cluster, Maintenance, Auth, Health, Election, Lock), if any. */
  handler(name: string): UnaryHandler | undefined {
    // RPCs a release does not have are unknown to it (Unimplemented), whoever implements them.
    const release = this.server.opts.release;
    if (name === 'AuthStatus' && !release.authStatusRpc) return undefined;
    if (name === 'Downgrade' && !release.downgradeRpc) return undefined;
    const own = (this as unknown as Record<string, unknown>)[name];
    if (typeof own === 'function' && /^[A-Z]/.test(name)) return own as UnaryHandler;
    return this.extra[name];
  }

  header(revision?: number): Pb {
    const s = this.server;
    return { cluster_id: s.clusterIdLong, member_id: s.memberIdLong, revision: revision ?? s.kv.rev(), raft_term: s.term };
  }

  /** Membership answers carry no revision in the reference. */
  private clusterHeader(): Pb {
    const s = this.server;
    return { cluster_id: s.clusterIdLong, member_id: s.memberIdLong, raft_term: s.term };
  }

  // ------------------------------------------------------------------------------------------- KV

  Range = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const r = rangeFromPb(req);
    this.gate.requireKeys(meta, Buffer.from(r.key), Buffer.from(r.rangeEnd), false);
    if (!r.serializable) await this.server.linearizableReadNotify();
    const res = this.server.kv.range(r);
    return this.rangeToPb(res);
  };

  private rangeToPb(res: RangeResult): Pb {
    return { header: this.header(res.revision), kvs: res.kvs.map(kvToPb), more: res.more, count: res.count };
  }

  Put = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const p = putFromPb(req);
    this.gate.requireKeys(meta, Buffer.from(p.key), Buffer.alloc(0), true);
    if (p.key.length === 0) throw Errors.emptyKey();
    if (p.ignoreValue && p.value.length > 0) throw Errors.valueProvided();
    if (p.ignoreLease && p.lease !== 0n) throw Errors.leaseProvided();
    await this.checkQuota(p.key.length + p.value.length);
    const res = await this.server.propose<PutResult>({ id: this.server.nextRequestId(), kind: 'put', put: p });
    return this.putToPb(res);
  };

  private putToPb(res: PutResult): Pb {
    const out: Pb = { header: this.header(res.revision) };
    if (res.prevKv) out.prev_kv = kvToPb(res.prevKv);
    return out;
  }

  DeleteRange = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const d = deleteFromPb(req);
    this.gate.requireKeys(meta, Buffer.from(d.key), Buffer.from(d.rangeEnd), true);
    if (d.key.length === 0) throw Errors.emptyKey();
    const res = await this.server.propose<DeleteResult>({ id: this.server.nextRequestId(), kind: 'deleteRange', deleteRange: d });
    return this.deleteToPb(res);
  };

  private deleteToPb(res: DeleteResult): Pb {
    return { header: this.header(res.revision), deleted: res.deleted, prev_kvs: res.prevKvs.map(kvToPb) };
  }

  Txn = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const t = txnFromPb(req);
    this.checkTxn(t);
    this.gate.requireTxn(meta, t);
    let res: TxnResult;
    if (txnIsReadOnly(t)) {
      const serializable = [...t.success, ...t.failure].every((op) => !('range' in op) || op.range.serializable);
      if (!serializable) await this.server.linearizableReadNotify();
      res = this.server.kv.readOnlyTxn(t);
    } else {
      await this.checkQuota(0);
      res = await this.server.propose<TxnResult>({ id: this.server.nextRequestId(), kind: 'txn', txn: t });
    }
    return this.txnToPb(res);
  };

  private txnToPb(res: TxnResult): Pb {
    return {
      header: this.header(res.revision),
      succeeded: res.succeeded,
      responses: res.responses.map((r: OpResult) => {
        if ('range' in r) return { response_range: this.rangeToPb(r.range) };
        if ('put' in r) return { response_put: this.putToPb(r.put) };
        if ('deleteRange' in r) return { response_delete_range: this.deleteToPb(r.deleteRange) };
        return { response_txn: this.txnToPb(r.txn) };
      }),
    };
  }

  /** The reference's txn checks: op count, nesting, and no key written twice in one branch (nested txns included). */
  private checkTxn(t: TxnRequest, depth = 0): void {
    // The answer nests as deep as the request: past this depth it could not be encoded, so refuse it up front.
    if (depth > MAX_TXN_DEPTH) throw new ServerError(Code.InvalidArgument, `etcdserver: txn nesting deeper than ${MAX_TXN_DEPTH} levels`);
    const max = this.server.opts.maxTxnOps;
    if (t.compare.length > max || t.success.length > max || t.failure.length > max) throw Errors.tooManyOps();
    for (const c of t.compare) if (c.key.length === 0) throw Errors.emptyKey();
    const checkBranch = (ops: RequestOp[]) => {
      const puts = new Set<string>();
      const dels: Array<{ key: Uint8Array; end: Uint8Array }> = [];
      for (const op of ops) {
        if ('put' in op) {
          if (op.put.key.length === 0) throw Errors.emptyKey();
          const k = Buffer.from(op.put.key).toString('hex');
          if (puts.has(k)) throw Errors.duplicateKey();
          puts.add(k);
        } else if ('deleteRange' in op) {
          if (op.deleteRange.key.length === 0) throw Errors.emptyKey();
          dels.push({ key: op.deleteRange.key, end: op.deleteRange.rangeEnd });
        } else if ('range' in op) {
          if (op.range.key.length === 0) throw Errors.emptyKey();
        } else {
          this.checkTxn(op.txn, depth + 1);
          // Puts of nested txns (of either branch) count as puts of this branch, as the reference checks them.
          for (const k of nestedPutKeys(op.txn)) {
            if (puts.has(k)) throw Errors.duplicateKey();
            puts.add(k);
          }
        }
      }
      for (const k of puts) {
        const key = Buffer.from(k, 'hex');
        for (const d of dels) {
          const inRange = d.end.length === 0 ? Buffer.compare(key, Buffer.from(d.key)) === 0
            : Buffer.compare(key, Buffer.from(d.key)) >= 0 && (Buffer.from(d.end).equals(Buffer.from([0])) || Buffer.compare(key, Buffer.from(d.end)) < 0);
          if (inRange) throw Errors.duplicateKey();
        }
      }
    };
    checkBranch(t.success);
    checkBranch(t.failure);
  }

  Compact = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const revision = Number(req.revision ?? 0);
    const res = await this.server.propose<{ revision: number; done: Promise<void> }>({ id: this.server.nextRequestId(), kind: 'compaction', compaction: { revision, physical: !!req.physical } });
    // physical: answer only once the compacted revisions are gone from the db.
    if (req.physical) await res.done;
    return { header: this.header(res.revision) };
  };

  /** Refuse writes while NOSPACE is raised, and raise it when this write would pass the quota. */
  private async checkQuota(extra: number): Promise<void> {
    const s = this.server;
    if (s.alarms.some((a) => a.alarm === 'NOSPACE')) throw Errors.noSpace();
    const quota = s.opts.quotaBackendBytes;
    if (quota > 0 && s.backend.size() + extra > quota) {
      s.logger.warn('database space exceeded; raising the NOSPACE alarm', { 'quota-size-bytes': quota, 'current-db-size-bytes': s.backend.size() });
      await s.propose({ id: s.nextRequestId(), kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: s.memberId, alarm: 'NOSPACE' } }).catch(() => undefined);
      throw Errors.noSpace();
    }
  }

  // ------------------------------------------------------------------------------------------- Lease

  LeaseGrant = async (req: Pb): Promise<Pb> => {
    await this.checkQuota(0);
    let id = BigInt(req.ID ?? 0);
    if (id === 0n) id = this.server.nextRequestId() & 0x7fffffffffffffffn;
    const ttl = Number(req.TTL ?? 0);
    const res = await this.server.propose<{ id: bigint; ttl: number }>({ id: this.server.nextRequestId(), kind: 'leaseGrant', leaseGrant: { id, ttl } });
    return { header: this.header(), ID: res.id.toString(), TTL: res.ttl, error: '' };
  };

  LeaseRevoke = async (req: Pb): Promise<Pb> => {
    const id = BigInt(req.ID ?? 0);
    await this.server.propose({ id: this.server.nextRequestId(), kind: 'leaseRevoke', leaseRevoke: { id } });
    return { header: this.header() };
  };

  LeaseTimeToLive = async (req: Pb): Promise<Pb> => {
    await this.server.linearizableReadNotify();
    const id = BigInt(req.ID ?? 0);
    const notFound = { header: this.header(), ID: id.toString(), TTL: -1, grantedTTL: 0, keys: [] };
    if (!this.server.kv.lessor.exists(id)) return notFound;
    if (!this.server.isLeader()) {
      // Only the leader tracks expiry: ask it for the remaining time.
      try {
        const t = await this.server.forwardLeaseCall<{ ttl: number; grantedTtl: number; keys: string[] }>('ttl', { id: id.toString(), keys: !!req.keys });
        return { header: this.header(), ID: id.toString(), TTL: t.ttl, grantedTTL: t.grantedTtl, keys: t.keys.map((k) => Buffer.from(k, 'base64')) };
      } catch (e) {
        if ((e as Error).message === Errors.leaseNotFound().message) return notFound;
        throw e;
      }
    }
    const t = this.server.kv.lessor.timeToLive(id, !!req.keys);
    return { header: this.header(), ID: id.toString(), TTL: t.ttl, grantedTTL: t.grantedTtl, keys: t.keys ?? [] };
  };

  LeaseLeases = async (): Promise<Pb> => {
    await this.server.linearizableReadNotify();
    return { header: this.header(), leases: this.server.kv.lessor.leases().map((l: { id: bigint }) => ({ ID: l.id.toString() })) };
  };

  // ------------------------------------------------------------------------------------------- Cluster

  private memberToPb(m: Member): Pb {
    return { ID: m.id.toString(), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner };
  }

  private membersPb(list: Member[]): Pb[] {
    return list.map((m) => this.memberToPb(m));
  }

  MemberAdd = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const peerURLs: string[] = req.peerURLs ?? [];
    if (peerURLs.length === 0 || peerURLs.some((u) => !isUrl(u))) throw Errors.memberBadURLs();
    const isLearner = !!req.isLearner;
    const id = computeMemberId(peerURLs, this.server.opts.initialClusterToken, Date.now());
    this.server.membership.validateAdd(id, peerURLs);
    if (this.server.opts.strictReconfigCheck) this.mayAddMember(isLearner, peerURLs);
    const member: Member = { id, name: '', peerURLs, clientURLs: [], isLearner };
    const list = await this.server.proposeConfChange(isLearner ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode, id, member);
    return { header: this.clusterHeader(), member: this.memberToPb(member), members: this.membersPb(list) };
  };

  /**
   * Strict reconfiguration (--strict-reconfig-check), as the reference's mayAddMember in 3.4 and 3.5: a voter is
   * refused while too few voters have ever started (published their name) to keep a quorum once it is added;
   * then any member, learners included, is refused unless this member has been connected to every voter for
   * the reference's health interval (5 s).
   */
  private mayAddMember(isLearner: boolean, peerURLs: string[]): void {
    const s = this.server;
    const voters = s.membership.voters();
    const requested = { 'local-member-id': idHex(s.memberId), 'requested-member-add': { peerURLs, isLearner } };
    if (!isLearner && !readyToAddVoter(voters)) {
      s.logger.warn('rejecting member add request; not enough healthy members', { ...requested, error: Errors.memberNotEnoughStarted().message });
      throw Errors.memberNotEnoughStarted();
    }
    const since = Date.now() - HEALTH_INTERVAL_MS;
    const connected = voters.every((m) => {
      if (m.id === s.memberId) return true;
      const t = s.transport.activeSince(m.id);
      return t !== undefined && t < since;
    });
    if (!connected) {
      s.logger.warn('rejecting member add request; local member has not been connected to all peers, reconfigure breaks active quorum', { ...requested, error: Errors.unhealthy().message });
      throw Errors.unhealthy();
    }
  }

  MemberRemove = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const id = BigInt(req.ID ?? 0);
    this.server.membership.validateRemove(id);
    const list = await this.server.proposeConfChange(ConfChangeType.RemoveNode, id, {});
    return { header: this.clusterHeader(), members: this.membersPb(list) };
  };

  MemberUpdate = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const id = BigInt(req.ID ?? 0);
    const peerURLs: string[] = req.peerURLs ?? [];
    if (peerURLs.length === 0 || peerURLs.some((u) => !isUrl(u))) throw Errors.memberBadURLs();
    this.server.membership.validateUpdate(id, peerURLs);
    const list = await this.server.proposeConfChange(ConfChangeType.UpdateNode, id, { peerURLs });
    return { header: this.clusterHeader(), members: this.membersPb(list) };
  };

  MemberList = async (req: Pb): Promise<Pb> => {
    if (req.linearizable) await this.server.linearizableReadNotify();
    return { header: this.clusterHeader(), members: this.membersPb(this.server.membership.list()) };
  };

  MemberPromote = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const id = BigInt(req.ID ?? 0);
    this.server.membership.validatePromote(id);
    if (!this.server.isLeader()) throw Errors.notLeader();
    const progress = this.server.raft.status().progress?.get(id);
    const leaderMatch = this.server.raft.status().progress?.get(this.server.memberId)?.match ?? 0;
    if (!progress || progress.match < leaderMatch * 0.9) throw Errors.learnerNotReady();
    const list = await this.server.proposeConfChange(ConfChangeType.AddNode, id, {});
    return { header: this.clusterHeader(), members: this.membersPb(list) };
  };

  // ------------------------------------------------------------------------------------------- Maintenance

  Alarm = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const action = (req.action || 'GET') as 'GET' | 'ACTIVATE' | 'DEACTIVATE';
    if (action !== 'GET') this.gate.requireAdmin(meta);
    const alarm = (req.alarm || 'NONE') as AlarmType;
    const memberId = BigInt(req.memberID ?? 0);
    let list: Array<{ memberId: bigint; alarm: AlarmType }>;
    if (action === 'GET') {
      // Like the reference (which sends it through the log), a listing reflects every alarm raised before it.
      await this.server.linearizableReadNotify();
      list = this.server.alarms.filter((a) => (memberId === 0n || a.memberId === memberId) && (alarm === 'NONE' || a.alarm === alarm));
    } else {
      list = await this.server.propose({ id: this.server.nextRequestId(), kind: 'alarm', alarm: { action, memberId, alarm } });
    }
    return { header: this.header(), alarms: list.map((a) => ({ memberID: a.memberId.toString(), alarm: a.alarm })) };
  };

  Status = async (): Promise<Pb> => {
    const st = this.server.status();
    const errors = this.server.alarms.map((a) => `memberID:${a.memberId} alarm:${a.alarm} `);
    if (st.leader === 0n) errors.push('etcdserver: no leader');
    return {
      header: this.header(),
      version: this.server.opts.release.version,
      dbSize: st.dbSize,
      leader: st.leader.toString(),
      raftIndex: st.commitIndex,
      raftTerm: st.term,
      raftAppliedIndex: st.appliedIndex,
      errors,
      dbSizeInUse: st.dbSizeInUse,
      isLearner: st.isLearner,
    };
  };

  Defragment = async (_req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    // Catch up with what the cluster committed before this request (a compaction the leader already answered may
    // not be applied here yet), so the copy leaves out what it deletes. Without a leader, defragment anyway.
    await this.server.linearizableReadNotify().catch(() => undefined);
    await this.server.kv.defrag();
    return { header: this.header() };
  };

  Hash = async (_req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const t0 = process.hrtime.bigint();
    const hash = this.server.kv.hash();
    this.server.observers.hash?.(Number(process.hrtime.bigint() - t0) / 1e9);
    return { header: this.header(), hash };
  };

  HashKV = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    const t0 = process.hrtime.bigint();
    const r = this.server.kv.hashKV(Number(req.revision ?? 0));
    this.server.observers.hashRev?.(Number(process.hrtime.bigint() - t0) / 1e9);
    const out: Pb = { header: this.header(r.revision), hash: r.hash, compact_revision: r.compactRevision };
    if (this.server.opts.release.hashKvHashRevision) out.hash_revision = r.hashRevision;
    return out;
  };

  /**
   * Maintenance/Downgrade (3.5): svc validates a downgrade target but does not run online downgrades; the
   * way back after an upgrade completed is a restore from the snapshot taken before it.
   */
  Downgrade = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    if (!this.server.capable('3.5')) throw Errors.unavailableUntil('Downgrade', '3.5');
    this.gate.requireAdmin(meta);
    const cv = this.server.membership.version ?? '3.0';
    const target = String(req.version ?? '');
    const [cm, cn] = cv.split('.').map(Number);
    const [tm, tn] = target.split('.').map(Number);
    if (!(tm === cm && tn === cn - 1)) throw new ServerError(Code.InvalidArgument, `etcdserver: invalid downgrade target version: ${target} (the cluster version is ${cv}; only one minor version down is allowed)`);
    if (req.action === 'VALIDATE') return { header: this.header(), version: `${cv}.0` };
    throw new ServerError(Code.FailedPrecondition, 'etcdserver: online downgrade is not supported by svc; restore the snapshot taken before the upgrade');
  };

  /** grpc.health.v1.Health/Check: SERVING while the member has a leader. */
  Check = async (): Promise<Pb> => ({ status: this.server.lead !== 0n ? 'SERVING' : 'NOT_SERVING' });

  MoveLeader = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    this.gate.requireAdmin(meta);
    await this.server.moveLeader(BigInt(req.targetID ?? 0));
    return { header: this.header() };
  };
}

/** How long a peer must have been connected before a member add counts it as healthy (the reference's HealthInterval). */
export const HEALTH_INTERVAL_MS = 5000;

/**
 * Would the voters still have a quorum of started members with one more (not yet started) voter? A member has
 * started once it published its name. The reference's one exception: a second voter may join a 1-member cluster
 * (how a cluster restored from a snapshot on one member grows), although there is no quorum until it starts.
 */
function readyToAddVoter(voters: Member[]): boolean {
  const members = voters.length + 1;
  const started = voters.filter((m) => m.name !== '').length;
  if (started === 1 && members === 2) return true;
  return started >= Math.floor(members / 2) + 1;
}

/** Deepest txn nesting accepted (protobuf encoders refuse answers nested much deeper). */
export const MAX_TXN_DEPTH = 32;

/** Keys (hex) put anywhere inside a txn, in both branches. */
function nestedPutKeys(t: TxnRequest): Set<string> {
  const keys = new Set<string>();
  for (const op of [...t.success, ...t.failure]) {
    if ('put' in op) keys.add(Buffer.from(op.put.key).toString('hex'));
    else if ('txn' in op) for (const k of nestedPutKeys(op.txn)) keys.add(k);
  }
  return keys;
}

function isUrl(u: string): boolean {
  try {
    const p = new URL(u);
    return (p.protocol === 'http:' || p.protocol === 'https:') && p.port !== '';
  } catch {
    return false;
  }
}

