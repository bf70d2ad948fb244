// The applier: applies committed entries in order. Conf changes, membership attributes, the cluster version,
// alarms and v2 requests change the "internal state" kept here (and in consensus snapshots); v3 requests go to
// the v3 state machine. Settles the waiters of the proposals it applies.
import { decodeConfChange } from '../raft/index.js';
import { ConfChangeType, EntryType, type ConfChange, type Entry } from '../raft/types.js';
import { idHex } from '../cluster/ids.js';
import { Membership, type Member } from '../cluster/membership.js';
import { checkDowngrade } from '../cluster/version.js';
import { admitDuringDowngrade, decodeDowngradeInfo, encodeDowngradeInfo, NO_DOWNGRADE, type DowngradeInfo } from '../cluster/downgrade.js';
import { compareMinor, minorOf, type Release } from '../releases.js';
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import { duration, durationNs } from '../log/fields.js';
import { V2Store } from './v2store.js';
import { decodeRequest, decodeTagged, type AlarmType, type InternalRequest } from './requests.js';
import { Errors, ServerError } from './errors.js';
import { IndexWaiters } from './wait.js';
import { FatalStartError } from './fatal.js';
import type { ProposalWaiters } from './proposer.js';
import type { AlarmEntry, Observers } from './interfaces.js';

export const CLUSTER_VERSION_KEY = new TextEncoder().encode('clusterVersion');

/** The cluster version a member last applied, as kept in the db (undefined before the first). */
export function clusterVersionInDb(backend: Pick<Backend, 'readTx'>): string | undefined {
  const v = backend.readTx().get('cluster', CLUSTER_VERSION_KEY);
  return v ? Buffer.from(v).toString('utf8') : undefined;
}

export const DOWNGRADE_KEY = new TextEncoder().encode('downgrade');

/** The downgrade job as the db keeps it (undefined before the first ENABLE). */
export function downgradeInDb(backend: Pick<Backend, 'readTx'>): DowngradeInfo | undefined {
  const v = backend.readTx().get('cluster', DOWNGRADE_KEY);
  return v ? decodeDowngradeInfo(Buffer.from(v).toString('utf8')) : undefined;
}

/** What a consensus snapshot carries besides the v3 db. */
export interface InternalState {
  membership: Membership;
  v2: V2Store;
  alarms: AlarmEntry[];
}

interface InternalStateJSON {
  membership: ReturnType<Membership['toJSON']>;
  v2: unknown;
  alarms: Array<{ memberId: string; alarm: AlarmType }>;
}

export function encodeInternalState(st: InternalState): Uint8Array {
  const json: InternalStateJSON = {
    membership: st.membership.toJSON(),
    v2: st.v2.toJSON(),
    alarms: st.alarms.map((a) => ({ memberId: idHex(a.memberId), alarm: a.alarm })),
  };
  return Buffer.from(JSON.stringify(json));
}

export function decodeInternalState(data: Uint8Array): InternalState {
  const st = JSON.parse(Buffer.from(data).toString('utf8')) as InternalStateJSON;
  return {
    membership: Membership.fromJSON(st.membership),
    v2: V2Store.fromJSON(st.v2 as { index: number; root: unknown }),
    alarms: st.alarms.map((a) => ({ memberId: BigInt('0x' + a.memberId), alarm: a.alarm })),
  };
}

/** The v3 state machine as the applier drives it. */
export interface V3Apply {
  consistentIndex(): number;
  apply(req: InternalRequest, index: number, term: number): unknown;
  /** Record an entry as applied without applying it (a refused one). */
  markApplied?(index: number, term: number): void;
  /** The db (replaced when a snapshot arrives): the cluster version is kept in it too. */
  currentBackend(): Pick<Backend, 'readTx' | 'batchTx'>;
}

/** The consensus node as the applier sees it. */
export interface ApplierNode {
  applyConfChange(cc: ConfChange): void;
  isLeader(): boolean;
  /** The current term (of the hard state). */
  currentTerm(): number;
}

/** The peers the transport talks to. */
export interface PeerSet {
  addPeer(id: bigint, urls: string[]): void;
  removePeer(id: bigint): void;
  updatePeer(id: bigint, urls: string[]): void;
}

export interface ApplierHooks {
  /** The leader's first entry of its term applied: time to check the cluster version. */
  onLeaderFirstCommit(): void;
  /** This member was removed from the cluster. */
  onRemoved(): void;
  /** The member cannot go on (a downgrade below the cluster version). */
  fatal(e: Error): void;
  /** A downgrade lowered the cluster version: snapshot now, so no entry of the higher version is replayed at restart. */
  forceSnapshot(): void;
  /** Entries applied (for the embedding program). */
  onApplied?(count: number): void;
}

export interface ApplierOptions {
  memberId: bigint;
  clusterId: bigint;
  /** This member's release version ("3.4.23"): a cluster version above it is fatal. */
  localVersion: string;
  /** This member's release's downgrade rules. */
  downgrade: Release['downgrade'];
  /** The release keeps a storage version (3.6+): its monitor, not the ENABLE, says the member is ready to downgrade. */
  storageVersion: boolean;
  logger: Logger;
  /** An apply slower than this (ms) is logged as "apply request took too long". */
  warningApplyMs: number;
}

/** The requests refused while the CORRUPT alarm is raised. */
const CORRUPT_REFUSED = new Set<InternalRequest['kind']>(['put', 'deleteRange', 'txn', 'compaction', 'leaseGrant', 'leaseRevoke']);

export class Applier {
  private _membership: Membership;
  /** --experimental-warning-apply-duration in ms, compared with each entry's apply time. */
  private readonly warningApplyMs: number;
  private _v2: V2Store;
  private _alarms: AlarmEntry[];
  private _appliedIndex: number;
  private readonly appliedWaiters = new IndexWaiters();
  private leaderFirstCommitDone = false;

  constructor(
    initial: InternalState & { appliedIndex: number },
    private readonly kv: V3Apply,
    private readonly node: ApplierNode,
    private readonly peers: PeerSet,
    private readonly waiters: ProposalWaiters,
    private readonly hooks: ApplierHooks,
    private readonly observers: Observers,
    /** The counter the metrics layer reads. */
    private readonly stats: { proposalsApplied: number },
    private readonly opts: ApplierOptions,
  ) {
    this._membership = initial.membership;
    this._v2 = initial.v2;
    this._alarms = initial.alarms;
    this._appliedIndex = initial.appliedIndex;
    this.warningApplyMs = opts.warningApplyMs;
  }

  get membership(): Membership {
    return this._membership;
  }

  get v2(): V2Store {
    return this._v2;
  }

  get alarms(): readonly AlarmEntry[] {
    return this._alarms;
  }

  get appliedIndex(): number {
    return this._appliedIndex;
  }

  waitApplied(index: number, fn: () => void): void {
    this.appliedWaiters.wait(index, fn);
  }

  /** This member became leader: its first commit of the new term is still to come. */
  becameLeader(): void {
    this.leaderFirstCommitDone = false;
  }

  applyEntries(entries: Entry[]): void {
    // one clock read per request: each request's apply time runs from the read before it (a cheap double, not a
    // BigInt pair per entry)
    const t0 = performance.now();
    let last = t0;
    for (const e of entries) {
      if (e.index <= this._appliedIndex) continue;
      if (e.type === EntryType.ConfChange) {
        this.applyConfChangeEntry(e);
        last = performance.now();
      } else if (e.data.length === 0) {
        // The leader's empty entry of a new term: the first commit of this term.
        if (this.node.isLeader() && !this.leaderFirstCommitDone && e.term === this.node.currentTerm()) {
          this.leaderFirstCommitDone = true;
          this.hooks.onLeaderFirstCommit();
        }
      } else {
        last = this.applyRequest(e, last);
      }
      this._appliedIndex = e.index;
      this.stats.proposalsApplied++;
    }
    this.appliedWaiters.trigger(this._appliedIndex);
    this.observers.apply?.((performance.now() - t0) / 1e3 / Math.max(1, entries.length));
    this.hooks.onApplied?.(entries.length);
  }

  /** Applies one request entry, timed from `since` (ms); returns the time it finished. */
  private applyRequest(e: Entry, since: number): number {
    let req: InternalRequest;
    try {
      req = decodeRequest(e.data);
    } catch (err) {
      // Skipping a committed entry would make this member's store diverge from the others': stop instead.
      throw new FatalStartError(`cannot decode the committed entry at index ${e.index} (${String(err)}); this member cannot apply the log and stops (is another member running an incompatible build?)`);
    }
    let result: unknown;
    let error: Error | undefined;
    try {
      result = this.applyOne(req, e.index, e.term);
    } catch (err) {
      error = err as Error;
    }
    const now = performance.now();
    if (now - since > this.warningApplyMs) this.warnSlowApply(req, BigInt(Math.round((now - since) * 1e6)), result, error);
    if (!this.waiters.settle(req.id, result, error) && error && !(error instanceof ServerError)) {
      this.opts.logger.warn('applying a committed entry failed', { index: e.index, kind: req.kind, error: error.message });
    }
    return now;
  }

  private warnSlowApply(req: InternalRequest, took: bigint, result: unknown, error: Error | undefined): void {
    const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? Buffer.from(x).toString('base64') : x)) ?? '');
    this.opts.logger.warn('apply request took too long', {
      took: durationNs(took),
      'expected-duration': duration(this.opts.warningApplyMs),
      prefix: '',
      request: `${req.kind} size:${size(req)}`,
      ...(error ? { error: error.message } : { response: `size:${size(result)}` }),
    });
  }

  private applyOne(req: InternalRequest, index: number, term: number): unknown {
    switch (req.kind) {
      case 'memberAttrSet': {
        const a = req.memberAttrSet;
        this._membership.setAttributes(a.memberId, { name: a.name, clientURLs: a.clientURLs });
        return undefined;
      }
      case 'clusterVersionSet':
        this.applyClusterVersion(req.clusterVersionSet.version);
        return undefined;
      case 'downgradeInfoSet':
        this.applyDowngradeInfo(req.downgradeInfoSet.enabled ? { enabled: true, targetVersion: req.downgradeInfoSet.ver } : NO_DOWNGRADE);
        return undefined;
      case 'v2':
        return this._v2.apply(req.v2);
      case 'alarm':
        return this.applyAlarm(req.alarm.action, req.alarm.memberId, req.alarm.alarm);
      default:
        // v3 data: skip what the db already holds (the consistent index makes replay idempotent).
        if (index <= this.kv.consistentIndex()) return undefined;
        // While CORRUPT is raised the reference's applier refuses every write of the key space and of leases (the
        // entry still counts as applied).
        if (CORRUPT_REFUSED.has(req.kind) && this._alarms.some((a) => a.alarm === 'CORRUPT')) {
          this.kv.markApplied?.(index, term);
          throw Errors.corrupt();
        }
        return this.kv.apply(req, index, term);
    }
  }

  private applyClusterVersion(version: string): void {
    const { logger } = this.opts;
    const prev = this._membership.version;
    const fields = { 'cluster-id': idHex(this.opts.clusterId), 'local-member-id': idHex(this.opts.memberId) };
    if (prev === undefined) logger.info('set initial cluster version', { ...fields, 'cluster-version': version });
    else if (prev !== version) logger.info('updated cluster version', { ...fields, from: prev, to: version });
    this._membership.version = version;
    // Also kept in the db, where a member of a newer release can read it before it replays anything (replayed
    // history holds older versions: only a downgrade job moves the db's version down).
    const job = this._membership.downgrade;
    const backend = this.kv.currentBackend();
    const known = clusterVersionInDb(backend);
    if (known === undefined || compareMinor(version, known) > 0 || (job.enabled && minorOf(job.targetVersion) === version && known !== version)) {
      const tx = backend.batchTx();
      tx.put('cluster', CLUSTER_VERSION_KEY, Buffer.from(version));
      tx.end();
    }
    if (prev !== undefined && compareMinor(version, prev) < 0) {
      logger.info('Cluster version downgrade detected, forcing snapshot', { 'prev-cluster-version': `${prev}.0`, 'new-cluster-version': `${version}.0` });
      this.hooks.forceSnapshot();
    }
    if (prev !== version) logger.info('enabled capabilities for version', { 'cluster-version': version });
    // Replayed history holds older versions too: only the downgrade direction is fatal here.
    const check = admitDuringDowngrade(this.opts.downgrade, this.opts.localVersion, job) ?? checkDowngrade(this.opts.localVersion, version);
    if (!check.ok) {
      logger.error(check.reason, fields);
      this.hooks.fatal(new FatalStartError(check.reason));
    }
  }

  private applyDowngradeInfo(job: DowngradeInfo): void {
    this._membership.downgrade = job;
    const tx = this.kv.currentBackend().batchTx();
    tx.put('cluster', DOWNGRADE_KEY, Buffer.from(encodeDowngradeInfo(job)));
    tx.end();
    // 3.5 says it here; 3.6+ once its storage version is migrated
    if (job.enabled && !this.opts.storageVersion) this.opts.logger.info('The server is ready to downgrade', { 'target-version': job.targetVersion, 'server-version': this.opts.localVersion });
  }

  private applyAlarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: bigint, alarm: AlarmType): AlarmEntry[] {
    const { logger } = this.opts;
    if (action === 'ACTIVATE') {
      if (!this._alarms.some((a) => a.memberId === memberId && a.alarm === alarm)) {
        this._alarms.push({ memberId, alarm });
        logger.warn('alarm raised', { alarm, from: idHex(memberId) });
      }
      return [{ memberId, alarm }];
    }
    if (action === 'DEACTIVATE') {
      const before = this._alarms.length;
      this._alarms = this._alarms.filter((a) => !(a.memberId === memberId && a.alarm === alarm));
      if (this._alarms.length !== before) logger.warn('alarm disarmed', { alarm, from: idHex(memberId) });
      return before !== this._alarms.length ? [{ memberId, alarm }] : [];
    }
    return this._alarms.filter((a) => (memberId === 0n || a.memberId === memberId) && (alarm === 'NONE' || a.alarm === alarm));
  }

  private applyConfChangeEntry(e: Entry): void {
    const { logger, memberId, clusterId } = this.opts;
    const cc = decodeConfChange(e.data);
    // The context carries the member (name, URLs) and, for changes proposed here, the waiter id.
    const ctx = cc.context && cc.context.length > 0 ? decodeTagged<Member & { requestId?: bigint }>(cc.context) : undefined;
    this.node.applyConfChange(cc);
    const idHexStr = idHex(cc.nodeId);
    const membership = this._membership;
    switch (cc.type) {
      case ConfChangeType.AddNode:
      case ConfChangeType.AddLearnerNode: {
        const learner = cc.type === ConfChangeType.AddLearnerNode;
        const existing = membership.member(cc.nodeId);
        if (existing && existing.isLearner && !learner) {
          membership.promote(cc.nodeId);
          logger.info('promoted a learner member to voting member', { 'promoted-member-id': idHexStr });
        } else if (ctx && !existing) {
          membership.add({ id: cc.nodeId, name: ctx.name ?? '', peerURLs: ctx.peerURLs ?? [], clientURLs: ctx.clientURLs ?? [], isLearner: learner });
          logger.info('added member', { 'cluster-id': idHex(clusterId), 'local-member-id': idHex(memberId), 'added-peer-id': idHexStr, 'added-peer-peer-urls': ctx.peerURLs, 'added-peer-is-learner': learner });
          if (cc.nodeId !== memberId) this.peers.addPeer(cc.nodeId, ctx.peerURLs ?? []);
        }
        break;
      }
      case ConfChangeType.RemoveNode:
        membership.remove(cc.nodeId);
        logger.info('removed member', { 'cluster-id': idHex(clusterId), 'local-member-id': idHex(memberId), 'removed-remote-peer-id': idHexStr });
        if (cc.nodeId === memberId) {
          logger.warn('the local member has been removed from the cluster; shutting down', { 'local-member-id': idHexStr });
          this.hooks.onRemoved();
        } else {
          this.peers.removePeer(cc.nodeId);
        }
        break;
      case ConfChangeType.UpdateNode:
        if (ctx) {
          membership.updatePeerURLs(cc.nodeId, ctx.peerURLs ?? []);
          if (cc.nodeId !== memberId) this.peers.updatePeer(cc.nodeId, ctx.peerURLs ?? []);
          logger.info('updated member', { 'updated-remote-peer-id': idHexStr, 'updated-remote-peer-urls': ctx.peerURLs });
        }
        break;
    }
    if (ctx?.requestId !== undefined) this.waiters.confChangeApplied(ctx.requestId, membership.list());
  }

  // ------------------------------------------------------------------------------------------- snapshots

  /** The internal state, as a consensus snapshot carries it. */
  internalState(): Uint8Array {
    return encodeInternalState({ membership: this._membership, v2: this._v2, alarms: this._alarms });
  }

  /** A snapshot from the leader replaced the db: take its internal state, and reach every member in it. */
  restore(internal: Uint8Array): void {
    const st = decodeInternalState(internal);
    this._membership = st.membership;
    this._v2 = st.v2;
    this._alarms = st.alarms;
    for (const m of this._membership.list()) if (m.id !== this.opts.memberId) this.peers.addPeer(m.id, m.peerURLs);
  }

  /** The snapshot is saved: everything up to its index counts as applied. */
  snapshotApplied(index: number): void {
    this._appliedIndex = index;
    this.appliedWaiters.trigger(this._appliedIndex);
  }
}
