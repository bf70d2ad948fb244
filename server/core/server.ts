// A member of a svc cluster, wired from its components (as the reference's etcdserver): bootstrap (ids, storage,
// WAL, snapshotter, backend, membership), the raft node (the ready loop), the applier (conf changes,
// membership, alarms, v2) over the v3 state machine, the proposer (ids, waiters, batching, read index), the
// version monitor, lease forwarding, leadership transfer, membership changes and the quota. This file only
// connects them, starts the timers and the peer server, and stops everything in order.
import { StateRole, type ConfChangeType } from '../raft/types.js';
import type { RawNode } from '../raft/index.js';
import { Transport } from '../transport/transport.js';
import { startPeerServer } from '../transport/peer-server.js';
import { idHex } from '../cluster/ids.js';
import { fetchPeerVersion, peerRequest } from '../cluster/peer-http.js';
import type { Member, Membership } from '../cluster/membership.js';
import { compareMinor } from '../releases.js';
import type { Backend } from '../storage/backend.js';
import type { AuthStore } from '../auth/store.js';
import type { Logger } from '../log/logger.js';
import type { V2Store } from './v2store.js';
import type { InternalRequest } from './requests.js';
import { V3StateMachine } from './state-machine.js';
import { Applier } from './applier.js';
import { Proposer } from './proposer.js';
import { RaftNode } from './raft-node.js';
import { VersionMonitor } from './version-monitor.js';
import { LeaseForwarder } from './lease-forwarder.js';
import { LeadershipTransfer } from './leadership.js';
import { Reconfig, promoteForPeer, promoteOnLeader } from './reconfig.js';
import { Quota } from './quota.js';
import { Publisher } from './publisher.js';
import { MemberLifecycle } from './lifecycle.js';
import { startAutoCompaction } from './compactor.js';
import { adjustTicks } from './tick-advance.js';
import { CorruptionChecker, serveHashKV, type KvHash } from './corrupt.js';
import { bootstrap, initialMembers } from './bootstrap.js';
import type { AlarmEntry, LeaseTtl, Observers, ServerStatus } from './interfaces.js';
import { backendOptions, peerDialTls, peerServeTls, peerStreamTimings, type MemberOptions } from './options.js';
import { FatalStartError } from './fatal.js';
import { detectStorageVersion, updateStorageVersion } from './storage-version.js';
import type { DowngradeInfo } from '../cluster/downgrade.js';

export interface ServerEvents {
  onLeaderChange?(leader: bigint, term: number): void;
  onApplied?(count: number): void;
}

export class SvcServer {
  readonly logger: Logger;
  readonly opts: MemberOptions;
  readonly memberId: bigint;
  readonly clusterId: bigint;
  readonly kv: V3StateMachine;
  readonly transport: Transport;
  readonly events: ServerEvents = {};
  /** Counters the metrics layer reads. */
  readonly stats = { proposalsApplied: 0, proposalsPending: 0, proposalsFailed: 0, leaderChanges: 0, readIndexesFailed: 0 };
  /** Latency observers the metrics layer installs (seconds). */
  readonly observers: Observers = {};
  /** Called when this member was removed from the cluster and has stopped. */
  onRemoved?: () => void;

  private readonly lifecycle = new MemberLifecycle();
  /** Members of the cluster when this member started, itself included (the initial election tick advance). */
  private readonly startClusterSize: number;
  private readonly node: RaftNode;
  private readonly applier: Applier;
  private readonly proposer: Proposer;
  private readonly versions: VersionMonitor;
  private readonly leases: LeaseForwarder;
  private readonly leadership: LeadershipTransfer;
  private readonly reconfig: Reconfig;
  private readonly quota: Quota;
  private readonly publisher: Publisher;
  private readonly corruption: CorruptionChecker;
  private peerServer?: { close(): Promise<void> };
  private timers: NodeJS.Timeout[] = [];
  private stopCompactor: (() => void) | undefined;
  private fatalHandler?: (e: Error) => void;

  /** Open or create the member's data and join its cluster. Resolves once the member runs (not yet published). */
  static async start(opts: MemberOptions): Promise<SvcServer> {
    const b = await bootstrap(opts);
    const s = new SvcServer(opts, b);
    // A member that had data compares it with its peers' before it serves anything (a new member has nothing to compare).
    if (b.restarted && opts.initialCorruptCheck) {
      try {
        await s.corruption.initialCheck();
      } catch (e) {
        s.logger.error('checkInitialHashKV failed', { error: (e as Error).message });
        await s.transport.stop();
        await s.node.wal.close();
        s.kv.close();
        // the reference's etcdmain ends with its fatal "discovery failed" line for any start error
        throw new FatalStartError((e as Error).message, 'discovery failed');
      }
    }
    await s.run();
    return s;
  }

  private constructor(opts: MemberOptions, b: Awaited<ReturnType<typeof bootstrap>>) {
    this.opts = opts;
    const logger = (this.logger = opts.logger);
    this.memberId = b.memberId;
    this.clusterId = b.clusterId;
    const { memberId, lifecycle, stats, observers } = this;
    this.kv = new V3StateMachine(b.backend, { logger, electionMs: opts.electionMs, unsafeNoFsync: opts.unsafeNoFsync, authTokens: opts.authTokens, simpleTokenTtlMs: opts.simpleTokenTtlMs,
      backend: backendOptions(opts),
      compaction: { batchLimit: opts.compactionBatchLimit, sleepMs: opts.compactionSleepMs, observers: this.observers },
    });
    b.backend.onFailure = (e) => this.fatal(e);

    this.node = new RaftNode(
      { storage: b.storage, wal: b.wal, snapshotter: b.snapshotter, confState: b.confState, appliedIndex: b.appliedIndex, snapshotIndex: b.snapshotIndex },
      {
        onLeaderChange: (lead, _prev, term) => {
          if (lead !== 0n) stats.leaderChanges++;
          this.events.onLeaderChange?.(lead, term);
        },
        onRoleChange: (role, prevRole) => {
          if (role === StateRole.Leader && prevRole !== StateRole.Leader) {
            this.applier.becameLeader();
            this.kv.lessor.promote(Date.now());
          } else if (role !== StateRole.Leader && prevRole === StateRole.Leader) {
            this.kv.lessor.demote();
          }
        },
        applyEntries: (entries) => this.applier.applyEntries(entries),
        onReadState: (ctx, index) => this.proposer.onReadState(ctx, index),
        restoreSnapshot: (internal, db) => {
          this.kv.replaceBackend(db);
          this.applier.restore(internal);
        },
        snapshotApplied: (index) => this.applier.snapshotApplied(index),
        appliedIndex: () => this.applier.appliedIndex,
        internalState: () => this.applier.internalState(),
        isRemoved: (id) => this.applier.membership.removed.has(id),
        fatal: (e) => this.fatal(e),
      },
      lifecycle,
      observers,
      {
        memberId, logger, tickMs: opts.tickMs, electionMs: opts.electionMs, preVote: opts.preVote,
        snapshotCount: opts.snapshotCount, snapshotCatchUpEntries: opts.snapshotCatchUpEntries,
        maxSnapshots: opts.maxSnapshots, maxWals: opts.maxWals, snapDir: b.snapDir, walDir: b.walDir,
      },
    );
    const node = this.node;

    this.transport = new Transport({
      localId: memberId,
      clusterId: b.clusterId,
      logger,
      onMessage: (m) => node.step(m),
      onUnreachable: (id) => node.reportUnreachable(id),
      onRemoved: () => {
        logger.warn('the local member has been removed from the cluster; shutting down', { 'local-member-id': idHex(memberId) });
        this.stopRemoved();
      },
      onSnapshotStatus: (id, ok) => node.reportSnapshot(id, ok),
      timings: peerStreamTimings(opts),
      tls: peerDialTls(opts),
    });
    node.attach(this.transport, { forceCommit: () => this.kv.forceCommit(), snapshotTo: async (path) => void (await this.kv.currentBackend().snapshotTo(path)) });

    // The applier is made next (it settles the proposer's waiters); the proposer reads it only later.
    const self = this; // eslint-disable-line @typescript-eslint/no-this-alias
    const applied = { get appliedIndex(): number { return self.applier.appliedIndex; }, waitApplied: (i: number, fn: () => void) => this.applier.waitApplied(i, fn) };
    this.proposer = new Proposer(node, applied, lifecycle, stats, opts);
    this.applier = new Applier(
      { membership: b.membership, v2: b.v2, alarms: b.alarms, appliedIndex: b.appliedIndex },
      this.kv,
      node,
      this.transport,
      this.proposer,
      {
        onLeaderFirstCommit: () => setImmediate(() => void this.versions.check()),
        onRemoved: () => this.stopRemoved(),
        fatal: (e) => this.fatal(e),
        forceSnapshot: () => node.forceSnapshot(),
        onApplied: (n) => this.events.onApplied?.(n),
      },
      observers,
      stats,
      { memberId, clusterId: b.clusterId, localVersion: opts.release.version, downgrade: opts.release.downgrade, storageVersion: opts.release.storageVersion, logger, warningApplyMs: opts.warningApplyMs ?? 100 },
    );
    const membership = () => this.applier.membership;
    const proposals = this.proposer;

    this.versions = new VersionMonitor({
      memberId, localVersion: opts.release.version, logger, lifecycle, api: opts.release.clusterVersionApi,
      members: () => membership().list(),
      isLeader: () => node.isLeader(),
      clusterVersion: () => membership().version,
      fetchVersion: (m) => fetchPeerVersion(m.peerURLs, opts.peerTls),
      proposeClusterVersion: async (version) => void (await proposals.propose({ id: proposals.nextRequestId(), kind: 'clusterVersionSet', clusterVersionSet: { version } })),
      downgrade: () => membership().downgrade,
      cancelDowngrade: () => this.setDowngrade(undefined),
      updateStorageVersion: opts.release.storageVersion
        ? () => updateStorageVersion(this.backend, membership().version, membership().downgrade, opts.release.version, logger)
        : undefined,
    });
    this.leases = new LeaseForwarder({
      lessor: this.kv.lessor,
      renewLocal: (id) => this.kv.renewLease(id),
      leader: () => node.lead,
      isLeader: () => node.isLeader(),
      member: (id) => membership().member(id),
      proposals,
      requestTimeoutMs: () => proposals.requestTimeoutMs(),
      post: async (url, body, timeoutMs) => peerRequest(url, { method: 'POST', body, timeoutMs, tls: opts.peerTls }),
      logger, lifecycle,
    });
    this.leadership = new LeadershipTransfer({
      memberId, logger, tickMs: opts.tickMs, electionMs: opts.electionMs, node,
      member: (id) => membership().member(id),
      voters: () => membership().voters(),
      activeSince: (id) => this.transport.activeSince(id),
    });
    this.reconfig = new Reconfig({
      memberId, logger, initialClusterToken: opts.initialClusterToken, strictReconfigCheck: opts.strictReconfigCheck, addMemberConnected: opts.release.addMemberConnected, maxLearners: opts.maxLearners,
      membership,
      isLeader: () => node.isLeader(),
      progress: () => node.progress(),
      activeSince: (id) => this.transport.activeSince(id),
      proposeConfChange: (type, id, m) => proposals.proposeConfChange(type, id, m),
      promoteOnLeader: (id) => promoteOnLeader(membership().member(node.lead), id, { timeoutMs: proposals.requestTimeoutMs(), tls: opts.peerTls }),
    });
    this.quota = new Quota({
      memberId, quotaBytes: opts.quotaBackendBytes, logger, proposals,
      alarms: () => this.applier.alarms,
      dbSize: () => this.backend.size(),
    });
    this.publisher = new Publisher({
      memberId, clusterId: b.clusterId, name: opts.name, clientURLs: opts.advertiseClientURLs, logger, lifecycle, proposals, membership,
      lead: () => node.lead,
    });

    this.corruption = new CorruptionChecker({
      memberId, clusterId: b.clusterId, logger, tls: opts.peerTls,
      requestTimeoutMs: () => proposals.requestTimeoutMs(),
      hashByRev: (rev) => this.hashByRev(rev),
      compactionHashes: () => this.kv.store.storedCompactionHashes(),
      // the members this member knows: from its data, else (no snapshot yet) from its --initial-cluster
      peers: () => (membership().list().length > 0 ? membership().list() : [...b.configuredPeers, ...(opts.initialCluster.length > 0 ? initialMembers(opts) : [])]),
      linearizableReadNotify: () => proposals.linearizableReadNotify(),
      triggerCorruptAlarm: (id) => void proposals.propose({ id: proposals.nextRequestId(), kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: id, alarm: 'CORRUPT' } })
        .catch((e: unknown) => logger.warn('failed to raise the CORRUPT alarm', { error: (e as Error).message })),
    });

    for (const m of b.membership.list()) if (m.id !== memberId) this.transport.addPeer(m.id, m.peerURLs);
    for (const m of b.configuredPeers) if (m.id !== memberId && !b.membership.member(m.id)) this.transport.addPeer(m.id, m.peerURLs);
    this.startClusterSize = new Set([memberId, ...b.logMembers, ...b.configuredPeers.map((m) => m.id)]).size;
  }

  /** Serve peers, start the timers and the loop. */
  private async run(): Promise<void> {
    const { opts, logger } = this;
    this.peerServer = await startPeerServer({
      urls: opts.listenPeerURLs,
      transport: this.transport,
      logger,
      tls: peerServeTls(opts),
      routes: {
        version: () => this.versionInfo(),
        members: () => this.membership.list().map((m) => ({ id: idHex(m.id), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner })),
        clusterId: () => idHex(this.clusterId),
        leases: (op, body) => this.leases.callForPeer(op, body),
        promote: (id) => promoteForPeer(this.reconfig, id),
        downgradeEnabled: async () => {
          await this.linearizableReadNotify();
          return this.membership.downgrade.enabled;
        },
        hashKV: (method, path, cid, body) => serveHashKV({ clusterId: this.clusterId, logger, hashByRev: (rev) => this.hashByRev(rev) }, method, path, cid, body),
      },
    });
    this.corruption.startMonitors({ corruptCheckTimeMs: opts.corruptCheckTimeMs ?? 0, compactHashCheckTimeMs: opts.compactHashCheckTimeMs ?? 0, isLeader: () => this.isLeader(), ending: () => this.lifecycle.ending });
    this.timers.push(setInterval(() => this.node.tick(), opts.tickMs));
    void adjustTicks({
      memberId: this.memberId, clusterSize: this.startClusterSize, electionTicks: this.node.electionTicks, tickMs: opts.tickMs,
      enabled: opts.initialElectionTickAdvance ?? true, logger,
      activePeers: () => this.transport.activePeers(),
      leaderKnown: () => this.node.lead !== 0n,
      advance: (n) => this.node.advanceTicks(n),
      stopping: () => this.lifecycle.ending,
    });
    this.timers.push(setInterval(() => void this.versions.check(), opts.versionMonitorMs));
    // at once too: a member restarted on a lower release brings its storage version down before it is asked for it
    void this.versions.check();
    const downgradeCheckMs = opts.downgradeCheckMs ?? 5000;
    if (downgradeCheckMs > 0) this.timers.push(setInterval(() => void this.versions.checkDowngrade(), downgradeCheckMs));
    this.timers.push(setInterval(() => this.leases.revokeExpired(), 500));
    this.stopCompactor = startAutoCompaction(opts, { rev: () => this.kv.store.rev(), isLeader: () => this.isLeader(), propose: (r) => this.propose(r), nextRequestId: () => this.nextRequestId() });
    this.node.kick();
    void this.publisher.run();
  }

  /** The KV hash at `rev` (0: now) with this member's current revision, as HashKV computes it. */
  private hashByRev(rev: number): KvHash {
    const h = this.kv.store.hashByRev(rev);
    return { hash: h.hash, revision: h.currentRev, compactRevision: h.compactRev };
  }

  // ---------------------------------------------------------------------------------------------- state
  get membership(): Membership { return this.applier.membership; }
  get v2(): V2Store { return this.applier.v2; }
  get alarms(): readonly AlarmEntry[] { return this.applier.alarms; }
  get appliedIndex(): number { return this.applier.appliedIndex; }
  get backend(): Backend { return this.kv.currentBackend(); }
  get raft(): RawNode { return this.node.raft; }
  /** The current leader (0n: none). */
  get lead(): bigint { return this.node.lead; }
  get term(): number { return this.node.term; }
  get auth(): AuthStore { return this.kv.auth; }
  revision(): number { return this.kv.rev(); }
  isLeader(): boolean { return this.node.isLeader(); }
  /** Schedule a pass of the ready loop. */
  kick(): void { this.node.kick(); }
  clusterVersion(): string | undefined { return this.membership.version; }
  downgradeInfo(): DowngradeInfo { return this.membership.downgrade; }
  /** Enable a downgrade to `targetVersion` ("3.5.0"), or end the job (undefined), through the log. */
  async setDowngrade(targetVersion: string | undefined): Promise<void> {
    await this.proposer.propose({ id: this.proposer.nextRequestId(), kind: 'downgradeInfoSet', downgradeInfoSet: { enabled: targetVersion !== undefined, ver: targetVersion ?? '' } });
  }
  /** The cluster version as /version shows it: "3.4.0", or "not_decided". */
  clusterVersionFull(): string { return this.membership.version ? `${this.membership.version}.0` : 'not_decided'; }
  /** What /version answers: "storage" (the db's storage version, or "unknown") from 3.6 on. */
  versionInfo(): { etcdserver: string; etcdcluster: string; storage?: string } {
    const v = { etcdserver: this.opts.release.version, etcdcluster: this.clusterVersionFull() };
    return this.opts.release.storageVersion ? { ...v, storage: detectStorageVersion(this.backend) ?? 'unknown' } : v;
  }

  status(): ServerStatus {
    const st = this.node.raft.status();
    const me = this.membership.member(this.memberId);
    return {
      memberId: this.memberId,
      clusterId: this.clusterId,
      leader: this.lead,
      isLeader: this.isLeader(),
      term: st.hardState.term,
      commitIndex: st.hardState.commit,
      appliedIndex: this.appliedIndex,
      isLearner: !!me?.isLearner,
      dbSize: this.backend.size(),
      dbSizeInUse: this.backend.sizeInUse(),
      storageVersion: detectStorageVersion(this.backend),
      quotaBytes: this.opts.quotaBackendBytes,
      // No downgrade can be in progress: the Downgrade RPC refuses ENABLE.
      downgrade: this.membership.downgrade,
    };
  }

  isLearner(): boolean { return !!this.membership.member(this.memberId)?.isLearner; }
  /** Is a feature of release `minor` on? Only when this member and the cluster version both reach it. */
  capable(minor: string): boolean {
    const cv = this.membership.version;
    return cv !== undefined && compareMinor(cv, minor) >= 0 && compareMinor(this.opts.release.minor, minor) >= 0;
  }

  isPublished(): boolean { return this.publisher.isPublished(); }
  /** Resolves once this member is published to the cluster (the reference's ReadyNotify); rejects if it stops first. */
  readyNotify(): Promise<void> { return this.publisher.readyNotify(); }

  // ---------------------------------------------------------------------------------------------- proposals
  nextRequestId(): bigint { return this.proposer.nextRequestId(); }
  requestTimeoutMs(): number { return this.proposer.requestTimeoutMs(); }
  /** Propose a request and resolve with its apply result. */
  propose<T>(req: InternalRequest, timeoutMs?: number): Promise<T> { return this.proposer.propose<T>(req, timeoutMs); }
  /** Propose a membership change and resolve with the member list once it applied. */
  proposeConfChange(type: ConfChangeType, nodeId: bigint, member: Partial<Member>): Promise<Member[]> { return this.proposer.proposeConfChange(type, nodeId, member); }
  /** Resolves when a read issued now may be served locally and be linearizable. */
  linearizableReadNotify(timeoutMs?: number): Promise<void> { return this.proposer.linearizableReadNotify(timeoutMs); }
  checkQuota(extra: number): Promise<void> | undefined { return this.quota.checkQuota(extra); }

  // ---------------------------------------------------------------------------------------------- leases
  /** Keep a lease alive: the leader renews it; a follower asks the leader. Resolves with the TTL. */
  renewLease(id: bigint): Promise<number> { return this.leases.renew(id); }
  leaseTimeToLive(id: bigint, keys: boolean): Promise<LeaseTtl | undefined> { return this.leases.leaseTimeToLive(id, keys); }
  leaseIds(): bigint[] { return this.leases.leaseIds(); }

  // ---------------------------------------------------------------------------------------------- membership
  members(): Member[] { return this.reconfig.members(); }
  addMember(peerURLs: string[], isLearner: boolean): Promise<{ member: Member; members: Member[] }> { return this.reconfig.addMember(peerURLs, isLearner); }
  removeMember(id: bigint): Promise<Member[]> { return this.reconfig.removeMember(id); }
  updateMember(id: bigint, peerURLs: string[]): Promise<Member[]> { return this.reconfig.updateMember(id, peerURLs); }
  promoteMember(id: bigint): Promise<Member[]> { return this.reconfig.promoteMember(id); }

  // ---------------------------------------------------------------------------------------------- leadership
  /** Move leadership to `to`, waiting until it took over. */
  moveLeader(to: bigint, timeoutMs?: number): Promise<void> { return this.leadership.moveLeader(to, timeoutMs); }


  // ---------------------------------------------------------------------------------------------- stop
  /** What to do when the member cannot go on (the CLI exits; an embedding program is told). */
  onFatal(fn: (e: Error) => void): void {
    this.fatalHandler = fn;
  }

  private fatal(e: Error): void {
    void this.stop({ transferLeadership: false }).finally(() => this.fatalHandler?.(e));
  }

  /** This member was removed from the cluster: stop, then tell the embedding program. */
  private stopRemoved(): void {
    setImmediate(() => void this.stop({ transferLeadership: false }).then(() => this.onRemoved?.()));
  }

  async stop(o: { transferLeadership?: boolean } = {}): Promise<void> {
    const lc = this.lifecycle;
    if (lc.stopped || lc.stopping) return;
    lc.stopping = true;
    if (o.transferLeadership !== false) await this.leadership.transferOnStop();
    lc.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.corruption.stopMonitors();
    this.stopCompactor?.();
    await this.node.drained();
    this.proposer.stop();
    await this.transport.stop();
    await this.peerServer?.close();
    await this.node.wal.close();
    this.kv.close();
  }

  isStopped(): boolean { return this.lifecycle.stopped; }
}
