// A member of a svc cluster: drives the consensus core (ticks, messages, the ready/advance loop), persists what
// it must (WAL, snapshots, the v3 db), applies committed entries, and offers proposals and linearizable reads to
// the API layer. The consensus core itself is pure; this is the imperative shell around it.
import { existsSync, mkdirSync } from 'node:fs';
import protobuf from 'protobufjs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RawNode, MemoryStorage, RaftError, decodeConfChange } from '../raft/index.js';
import { ConfChangeType, EntryType, MessageType, StateRole, type ConfChange, type ConfState, type Entry, type Message, type Ready, type Snapshot } from '../raft/types.js';
import { createWal, openWal, walExists, type Wal } from '../storage/wal.js';
import { Snapshotter, walSnapshots } from '../storage/snapshotter.js';
import { purgeFiles } from '../storage/wal.js';
import { openBackend, type Backend } from '../storage/backend.js';
import { Transport } from '../transport/transport.js';
import { startPeerServer } from '../transport/peer-server.js';
import { computeClusterId, computeMemberId, idHex } from '../cluster/ids.js';
import { peerRequest, type PeerTlsClient } from '../cluster/peer-http.js';
import { Membership, attributesPath, type Member } from '../cluster/membership.js';
import { checkDowngrade, checkServerAgainstCluster, decideClusterVersion, higherVersionedMembers, INITIAL_CLUSTER_VERSION } from '../cluster/version.js';
import { compareMinor } from '../releases.js';
import { V2Store } from './v2store.js';
import { decodeRequest, decodeTagged, encodeRequest, encodeTagged, type InternalRequest, type AlarmType } from './requests.js';
import { Errors, ServerError } from './errors.js';
import { IdWaiters, IndexWaiters } from './wait.js';
import { V3StateMachine } from './state-machine.js';
import { startCompactor } from './compactor.js';
import type { MemberOptions } from './options.js';
import type { Logger } from '../log/logger.js';
import { packageLogger } from '../log/create-logger.js';
import { CodedError } from '../coded-error.js';
import type { AuthStore } from '../auth/store.js';
import type { LeaseTtl } from './interfaces.js';

/** Thrown for conditions under which a member must not start (missing db, downgrade after completion...). */
export class FatalStartError extends CodedError<'FATAL_START'> {
  constructor(message: string) {
    super('FATAL_START', message);
  }
}

interface InternalState {
  membership: ReturnType<Membership['toJSON']>;
  v2: unknown;
  alarms: Array<{ memberId: string; alarm: AlarmType }>;
}

interface WalMetadata {
  memberId: bigint;
  clusterId: bigint;
}

export interface ServerStatus {
  memberId: bigint;
  clusterId: bigint;
  leader: bigint;
  isLeader: boolean;
  term: number;
  commitIndex: number;
  appliedIndex: number;
  isLearner: boolean;
  dbSize: number;
  dbSizeInUse: number;
}

export interface ServerEvents {
  onLeaderChange?(leader: bigint, term: number): void;
  onApplied?(count: number): void;
}

export class SvcServer {
  readonly logger: Logger;
  readonly opts: MemberOptions;
  memberId!: bigint;
  clusterId!: bigint;
  /** The ids as protobuf 64-bit values, made once: every response header carries them. */
  memberIdLong!: protobuf.Long;
  clusterIdLong!: protobuf.Long;
  membership!: Membership;
  v2!: V2Store;
  alarms: Array<{ memberId: bigint; alarm: AlarmType }> = [];
  backend!: Backend;
  kv!: V3StateMachine;
  raft!: RawNode;
  private storage!: MemoryStorage;
  private wal!: Wal;
  private snapshotter!: Snapshotter;
  transport!: Transport;
  private peerServer?: { close(): Promise<void> };
  private readonly memberDir: string;
  private readonly snapDir: string;
  private readonly walDir: string;

  private confState: ConfState = { voters: [], learners: [] };
  appliedIndex = 0;
  private snapshotIndex = 0;
  lead = 0n;
  term = 0;
  role: StateRole = StateRole.Follower;
  private processing = false;
  /** Proposals waiting for the next ready pass (see flushProposals). */
  private proposalBatch: Array<{ id: bigint; data: Uint8Array }> = [];
  private stopped = false;
  private stopping = false;
  private timers: NodeJS.Timeout[] = [];
  private stopCompactor: (() => void) | undefined;
  private readonly proposals = new IdWaiters<unknown>();
  private readonly confWaiters = new IdWaiters<Member[]>();
  private readonly appliedWaiters = new IndexWaiters();
  private idPrefix: bigint;
  private idCounter = 0n;
  private readCounter = 0n;
  private pendingReads: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private inflightRead?: { ctx: string; waiters: Array<{ resolve: () => void; reject: (e: Error) => void }>; timer: NodeJS.Timeout };
  private leaderFirstCommitDone = false;
  private published = false;
  private peerVersions = new Map<bigint, string | undefined>();
  readonly events: ServerEvents = {};
  /** Counters the metrics layer reads. */
  readonly stats = { proposalsApplied: 0, proposalsPending: 0, proposalsFailed: 0, leaderChanges: 0, readIndexesFailed: 0 };
  /** Latency observers the metrics layer installs (seconds). */
  readonly observers: { walFsync?: (s: number) => void; apply?: (s: number) => void; hash?: (s: number) => void; hashRev?: (s: number) => void } = {};

  private constructor(opts: MemberOptions) {
    this.opts = opts;
    this.logger = opts.logger;
    this.memberDir = join(opts.dataDir, 'member');
    this.snapDir = join(this.memberDir, 'snap');
    this.walDir = opts.walDir ?? join(this.memberDir, 'wal');
    this.idPrefix = BigInt('0x' + randomBytes(3).toString('hex')) << 40n;
  }

  /** Open or create the member's data and join its cluster. Resolves once the member runs (not yet published). */
  static async start(opts: MemberOptions): Promise<SvcServer> {
    const s = new SvcServer(opts);
    await s.init();
    return s;
  }

  // ---------------------------------------------------------------------------------------------- start up

  private async init(): Promise<void> {
    const { logger, opts } = this;
    const dbPath = join(this.snapDir, 'db');
    const electionTick = Math.max(2, Math.round(opts.electionMs / opts.tickMs));
    this.storage = new MemoryStorage();
    this.snapshotter = new Snapshotter(logger, this.snapDir);
    let bootstrapPeers: Array<{ id: bigint; context: Uint8Array }> | undefined;
    let joinPeers: Member[] | undefined;

    if (!walExists(this.walDir)) {
      mkdirSync(this.snapDir, { recursive: true });
      if (opts.initialClusterState === 'new') {
        const members = this.initialMembers();
        const self = members.find((m) => m.name === opts.name);
        if (!self) throw new FatalStartError(`couldn't find local name "${opts.name}" in the initial cluster configuration`);
        const advertised = [...opts.advertisePeerURLs].sort().join(',');
        if ([...self.peerURLs].sort().join(',') !== advertised) {
          throw new FatalStartError(`--initial-cluster has ${opts.name}=${self.peerURLs.join(',')} but missing from --initial-advertise-peer-urls=${opts.advertisePeerURLs.join(',')}`);
        }
        this.memberId = self.id;
        this.clusterId = computeClusterId(members.map((m) => m.id));
        this.membership = new Membership(this.clusterId);
        bootstrapPeers = members.map((m) => ({ id: m.id, context: encodeTagged(m) }));
      } else {
        const { clusterId, members } = await this.fetchExistingCluster();
        const advertised = [...opts.advertisePeerURLs].sort().join(',');
        const self = members.find((m) => [...m.peerURLs].sort().join(',') === advertised);
        if (!self) throw new FatalStartError(`error validating peerURLs: member with peer URLs ${advertised} is not in the existing cluster; add it with "member add" first`);
        this.memberId = self.id;
        this.clusterId = clusterId;
        this.membership = new Membership(clusterId);
        // the ids come from the running members: ours may not be what our --initial-cluster-token would give
        joinPeers = members;
      }
      this.v2 = new V2Store();
      this.backend = openBackend(logger, dbPath, { unsafeNoFsync: opts.unsafeNoFsync });
      this.wal = await createWal(logger, this.walDir, encodeTagged({ memberId: this.memberId, clusterId: this.clusterId }), { unsafeNoFsync: opts.unsafeNoFsync });
      if (bootstrapPeers) {
        RawNode.bootstrap(this.storage, bootstrapPeers);
        const entries = this.storage.entries(this.storage.firstIndex(), this.storage.lastIndex() + 1);
        const hs = this.storage.initialState().hardState;
        await this.wal.save(hs, entries, true);
      }
      logger.info('starting local member', { 'local-member-id': idHex(this.memberId), 'cluster-id': idHex(this.clusterId) });
    } else {
      const marks = await walSnapshots(logger, this.walDir);
      const snap = await this.snapshotter.loadNewestAvailable(marks);
      if (snap && !existsSync(dbPath)) {
        throw new FatalStartError(`failed to find database snapshot file: ${dbPath} is missing while consensus snapshot ${snap.metadata.term.toString(16).padStart(16, '0')}-${snap.metadata.index.toString(16).padStart(16, '0')}.snap exists; refusing to start with an empty v3 store (restore the db file or the data dir)`);
      }
      this.backend = openBackend(logger, dbPath, { unsafeNoFsync: opts.unsafeNoFsync });
      this.refuseAuthUpgrade();
      this.wal = await openWal(logger, this.walDir, snap ? { index: snap.metadata.index, term: snap.metadata.term } : { index: 0, term: 0 }, { unsafeNoFsync: opts.unsafeNoFsync });
      const { metadata, hardState, entries } = await this.wal.readAll();
      const meta = decodeTagged<WalMetadata>(metadata);
      this.memberId = meta.memberId;
      this.clusterId = meta.clusterId;
      if (snap) {
        this.storage.applySnapshot(snap);
        this.restoreInternalState(snap.data);
        this.confState = snap.metadata.confState;
        this.snapshotIndex = snap.metadata.index;
        this.appliedIndex = snap.metadata.index;
      } else {
        this.membership = new Membership(this.clusterId);
        this.v2 = new V2Store();
      }
      this.storage.setHardState(hardState);
      this.storage.append(entries);
      // A restarted member starts from the floor version and moves up as it replays and as the leader decides.
      const fields = { 'cluster-id': idHex(this.clusterId), 'local-member-id': idHex(this.memberId) };
      if (this.membership.version === undefined) {
        this.membership.version = INITIAL_CLUSTER_VERSION;
        this.logger.info('set initial cluster version', { ...fields, 'cluster-version': INITIAL_CLUSTER_VERSION });
      } else {
        this.logger.info('set cluster version from store', { ...fields, 'cluster-version': this.membership.version });
      }
      this.logger.info('enabled capabilities for version', { 'cluster-version': this.membership.version });
      logger.info('restarting local member', { 'local-member-id': idHex(this.memberId), 'cluster-id': idHex(this.clusterId), 'commit-index': hardState.commit });
      const check = checkServerAgainstCluster(opts.release.version, this.lastClusterVersionInDb() ?? this.membership.version);
      if (!check.ok) {
        this.backend.close();
        await this.wal.close();
        throw new FatalStartError(check.reason);
      }
    }
    if (opts.initialClusterState === 'existing' && bootstrapPeers === undefined && !this.membership.member(this.memberId)) {
      await this.checkAgainstRunningMembers();
    }
    this.kv = new V3StateMachine(this.backend, { logger, electionMs: opts.electionMs, unsafeNoFsync: opts.unsafeNoFsync });
    this.memberIdLong = toLong(this.memberId);
    this.clusterIdLong = toLong(this.clusterId);

    this.raft = new RawNode({
      id: this.memberId,
      electionTick,
      heartbeatTick: 1,
      storage: this.storage,
      applied: this.appliedIndex,
      maxSizePerMsg: 1024 * 1024,
      maxInflightMsgs: 512,
      preVote: opts.preVote,
      checkQuorum: true,
      random: Math.random,
      logger: packageLogger(logger, 'raft'),
    });

    this.transport = new Transport({
      localId: this.memberId,
      clusterId: this.clusterId,
      logger,
      onMessage: (m) => this.onPeerMessage(m),
      onUnreachable: (id) => {
        try { this.raft.reportUnreachable(id); } catch { /* not a peer any more */ }
      },
      onRemoved: () => {
        this.logger.warn('the local member has been removed from the cluster; shutting down', { 'local-member-id': idHex(this.memberId) });
        setImmediate(() => void this.stop({ transferLeadership: false }).then(() => this.onRemoved?.()));
      },
      onSnapshotStatus: (id, ok) => {
        try { this.raft.reportSnapshot(id, ok); } catch { /* not a peer any more */ }
        this.kick();
      },
      tls: opts.peerTls ? { cert: opts.peerTls.cert, key: opts.peerTls.key, ca: opts.peerTls.ca, rejectUnauthorized: !!opts.peerTls.ca } : undefined,
    });
    for (const m of this.membership.list()) if (m.id !== this.memberId) this.transport.addPeer(m.id, m.peerURLs);
    if (opts.initialClusterState === 'existing' || bootstrapPeers) {
      // Peers named in the configuration are reachable before their conf-change entries apply.
      for (const m of joinPeers ?? this.initialMembers()) if (m.id !== this.memberId && !this.membership.member(m.id)) this.transport.addPeer(m.id, m.peerURLs);
    }

    this.peerServer = await startPeerServer({
      urls: opts.listenPeerURLs,
      transport: this.transport,
      logger,
      tls: opts.peerTls ? { cert: opts.peerTls.cert, key: opts.peerTls.key, ca: opts.peerTls.ca, clientCertAuth: opts.peerTls.clientCertAuth, crl: opts.peerTls.crl, allowedCNs: opts.peerTls.allowedCNs } : undefined,
      routes: {
        version: () => ({ etcdserver: opts.release.version, etcdcluster: this.clusterVersionFull() }),
        members: () => this.membersJSON(),
        clusterId: () => idHex(this.clusterId),
        leases: (op, body) => this.leaseCallForPeer(op, body),
      },
    });

    this.timers.push(setInterval(() => this.tick(), opts.tickMs));
    this.timers.push(setInterval(() => void this.monitorVersions(), opts.versionMonitorMs));
    this.timers.push(setInterval(() => void this.checkLeases(), 500));
    if (opts.autoCompaction && opts.autoCompaction.retention > 0) {
      this.stopCompactor = startCompactor(
        {
          rev: () => this.kv.store.rev(),
          isLeader: () => this.role === StateRole.Leader,
          compact: async (revision) => {
            await this.propose({ id: this.nextRequestId(), kind: 'compaction', compaction: { revision, physical: false } });
          },
        },
        {
          ...opts.autoCompaction,
          logger: this.logger,
          revisionIntervalMs: Number(process.env.SVC_AUTO_COMPACTION_REVISION_INTERVAL_MS) > 0 ? Number(process.env.SVC_AUTO_COMPACTION_REVISION_INTERVAL_MS) : undefined,
        },
      );
    }
    this.kick();
    void this.publish();
  }

  /** The cluster version this member last applied, as kept in the db (undefined before the first). */
  private lastClusterVersionInDb(): string | undefined {
    const v = this.backend.readTx().get('cluster', CLUSTER_VERSION_KEY);
    return v ? Buffer.from(v).toString('utf8') : undefined;
  }

  /** A joining member compares its release with the cluster version the running members report. */
  private async checkAgainstRunningMembers(): Promise<void> {
    const urls = this.opts.initialCluster.filter((m) => m.name !== this.opts.name).flatMap((m) => m.peerURLs);
    for (const u of urls) {
      try {
        const res = await peerRequest(new URL('/version', u).toString(), { timeoutMs: 1000, tls: this.opts.peerTls });
        const cv = (JSON.parse(res.body) as { etcdcluster?: string }).etcdcluster;
        if (!cv || cv === 'not_decided') continue;
        const check = checkServerAgainstCluster(this.opts.release.version, cv.split('.').slice(0, 2).join('.'));
        if (!check.ok) {
          this.backend.close();
          await this.wal.close();
          throw new FatalStartError(check.reason);
        }
        return;
      } catch (e) {
        if (e instanceof FatalStartError) throw e;
      }
    }
  }

  /** The spec: a rolling upgrade to 3.5 of a cluster with authentication on is not supported. Refuse before
   *  anything is written, so the data dir stays as the older release left it. */
  private refuseAuthUpgrade(): void {
    if (!this.opts.release.refusesAuthUpgradeFromBelow) return;
    const tx = this.backend.readTx();
    const authOn = tx.get('auth', new TextEncoder().encode('authEnabled'))?.[0] === 1;
    const cvBytes = tx.get('cluster', CLUSTER_VERSION_KEY);
    const cv = cvBytes ? Buffer.from(cvBytes).toString('utf8') : undefined;
    if (authOn && cv !== undefined && compareMinor(cv, this.opts.release.minor) < 0) {
      this.backend.close();
      throw new FatalStartError(`rolling upgrade to ${this.opts.release.minor} is not supported while authentication is enabled (cluster version ${cv}): ${this.opts.release.minor} changes the write-ahead-log format of authentication entries. Nothing was changed; restart this member with its previous release, then disable authentication before upgrading (or restore a snapshot into a new ${this.opts.release.minor} cluster)`);
    }
  }

  private initialMembers(): Member[] {
    return this.opts.initialCluster.map((m) => ({
      id: computeMemberId(m.peerURLs, this.opts.initialClusterToken),
      name: m.name,
      peerURLs: m.peerURLs,
      clientURLs: [],
      isLearner: false,
    }));
  }

  /** A joining member learns the cluster from the members' peer URLs. */
  private async fetchExistingCluster(): Promise<{ clusterId: bigint; members: Member[] }> {
    const urls = this.opts.initialCluster.filter((m) => m.name !== this.opts.name).flatMap((m) => m.peerURLs);
    const errors: string[] = [];
    for (const u of urls) {
      try {
        const res = await peerRequest(new URL('/members', u).toString(), { timeoutMs: 2000, tls: this.opts.peerTls });
        const cid = res.headers['x-etcd-cluster-id'] as string | undefined;
        const list = JSON.parse(res.body) as Array<{ id: string; name: string; peerURLs: string[]; clientURLs: string[]; isLearner?: boolean }>;
        if (!cid) throw new Error('no cluster id in the answer');
        return {
          clusterId: BigInt('0x' + cid),
          members: list.map((m) => ({ id: BigInt('0x' + m.id), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs ?? [], isLearner: !!m.isLearner })),
        };
      } catch (e) {
        errors.push(`${u}: ${(e as Error).message}`);
      }
    }
    throw new FatalStartError(`cannot fetch cluster info from peer urls (${errors.join('; ') || 'none given in --initial-cluster'})`);
  }

  membersJSON(): object[] {
    return this.membership.list().map((m) => ({ id: idHex(m.id), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner }));
  }

  /** The cluster version as /version shows it: "3.4.0", or "not_decided". */
  clusterVersionFull(): string {
    return this.membership.version ? `${this.membership.version}.0` : 'not_decided';
  }

  // ---------------------------------------------------------------------------------------------- the loop

  private tick(): void {
    if (this.stopped) return;
    this.raft.tick();
    this.kick();
  }

  private onPeerMessage(m: Message): void {
    if (this.stopped) return;
    if (this.membership.removed.has(m.from)) return;
    try {
      this.raft.step(m);
    } catch (e) {
      if (!(e instanceof RaftError)) throw e;
    }
    this.kick();
  }

  /** Schedule a pass over the ready state; passes never overlap. */
  kick(): void {
    if (this.processing || this.stopped) return;
    this.processing = true;
    setImmediate(() => void this.processReady());
  }

  private async processReady(): Promise<void> {
    try {
      while (!this.stopped) {
        this.flushProposals();
        if (!this.raft.hasReady()) break;
        const rd = this.raft.ready();
        await this.handleReady(rd);
      }
    } catch (e) {
      this.logger.error('consensus loop failed; stopping the member', { error: (e as Error).stack ?? String(e) });
      this.fatal(e as Error);
    } finally {
      this.processing = false;
    }
    if (!this.stopped && (this.proposalBatch.length > 0 || this.raft.hasReady())) this.kick();
  }

  /** Step the proposals gathered since the last pass as one batch: one append message per follower for all. */
  private flushProposals(): void {
    if (this.proposalBatch.length === 0) return;
    const batch = this.proposalBatch;
    this.proposalBatch = [];
    const data: Uint8Array[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) data[i] = batch[i].data;
    try {
      this.raft.proposeMany(data);
    } catch (e) {
      const err = e instanceof RaftError ? (this.lead === 0n ? Errors.noLeader() : Errors.leaderChanged()) : (e as Error);
      for (const p of batch) {
        this.stats.proposalsFailed++;
        this.proposals.reject(p.id, err);
      }
    }
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.onSoftState(rd.softState.lead, rd.softState.role);
    if (rd.hardState) this.term = rd.hardState.term;
    const isLeader = this.role === StateRole.Leader;
    // A leader may send while it writes its own log (the followers persist in parallel); a follower must not
    // acknowledge entries it has not persisted.
    if (isLeader) {
      this.send(rd.messages);
      // The WAL write below blocks the event loop: put the appends on the wire first so the followers' disk
      // writes overlap the leader's.
      this.transport.flush();
    }

    const snapshot = rd.snapshot && rd.snapshot.metadata.index > 0 ? rd.snapshot : undefined;
    if (snapshot) await this.receiveSnapshot(snapshot);
    // Committed entries are durable on a quorum already: apply them while this member's own write is under way
    // (the leader counts its own copy only once persisted, so nothing here outruns the quorum).
    if (rd.committedEntries.length > 0) this.applyEntries(rd.committedEntries);
    for (const rs of rd.readStates) this.onReadState(Buffer.from(rs.requestCtx).toString('hex'), rs.index);
    if (rd.hardState || rd.entries.length > 0) {
      const t0 = process.hrtime.bigint();
      const syncsBefore = this.wal.fsyncCount;
      await this.wal.save(rd.hardState, rd.entries, rd.mustSync);
      // As the reference, the fsync histogram counts saves that fsynced (none with --unsafe-no-fsync).
      if (this.wal.fsyncCount !== syncsBefore) this.observers.walFsync?.(Number(process.hrtime.bigint() - t0) / 1e9);
    }
    if (rd.hardState) this.storage.setHardState(rd.hardState);
    if (rd.entries.length > 0) this.storage.append(rd.entries);
    if (!isLeader) {
      this.send(rd.messages);
      this.transport.flush();
    }
    this.raft.advance(rd);
    await this.maybeSnapshot();
  }

  private onSoftState(lead: bigint, role: StateRole): void {
    const prevLead = this.lead;
    const prevRole = this.role;
    this.lead = lead;
    this.role = role;
    if (lead !== prevLead) {
      if (lead !== 0n) {
        this.stats.leaderChanges++;
        this.logger.info(prevLead === 0n ? 'elected leader' : 'changed leader', { 'local-member-id': idHex(this.memberId), 'leader-member-id': idHex(lead), term: this.raft.status().hardState.term });
      } else {
        this.logger.info('lost leader', { 'local-member-id': idHex(this.memberId), 'previous-leader-member-id': idHex(prevLead) });
      }
      this.events.onLeaderChange?.(lead, this.raft.status().hardState.term);
    }
    if (role === StateRole.Leader && prevRole !== StateRole.Leader) {
      this.leaderFirstCommitDone = false;
      this.kv.lessor.promote(Date.now());
    } else if (role !== StateRole.Leader && prevRole === StateRole.Leader) {
      this.kv.lessor.demote();
    }
  }

  private send(msgs: Message[]): void {
    if (msgs.length === 0) return;
    const out: Message[] = [];
    for (const m of msgs) {
      if (m.type === MessageType.Snap && m.snapshot) {
        // The consensus snapshot carries the internal state only; the v3 db travels with it to the follower.
        const snap = m.snapshot;
        this.packSnapshotWithDb(snap.data).then(
          (data) => this.transport.send([{ ...m, snapshot: { metadata: snap.metadata, data } }]),
          (e) => {
            this.logger.warn('failed to prepare a snapshot for a follower', { 'remote-peer-id': idHex(m.to), error: (e as Error).message });
            try { this.raft.reportSnapshot(m.to, false); } catch { /* gone */ }
          },
        );
      } else {
        out.push(m);
      }
    }
    this.transport.send(out);
  }

  // ---------------------------------------------------------------------------------------------- apply

  private applyEntries(entries: Entry[]): void {
    const t0 = process.hrtime.bigint();
    for (const e of entries) {
      if (e.index <= this.appliedIndex) continue;
      if (e.type === EntryType.ConfChange) {
        this.applyConfChangeEntry(e);
      } else if (e.data.length === 0) {
        // The leader's empty entry of a new term: the first commit of this term.
        if (this.role === StateRole.Leader && !this.leaderFirstCommitDone && e.term === this.raft.status().hardState.term) {
          this.leaderFirstCommitDone = true;
          setImmediate(() => void this.monitorVersions());
        }
      } else {
        this.applyRequest(e);
      }
      this.appliedIndex = e.index;
      this.stats.proposalsApplied++;
    }
    this.appliedWaiters.trigger(this.appliedIndex);
    this.observers.apply?.(Number(process.hrtime.bigint() - t0) / 1e9 / Math.max(1, entries.length));
    this.events.onApplied?.(entries.length);
  }

  private applyRequest(e: Entry): void {
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
    if (this.proposals.has(req.id)) {
      if (error) this.proposals.reject(req.id, error);
      else this.proposals.resolve(req.id, result);
    } else if (error && !(error instanceof ServerError)) {
      this.logger.warn('applying a committed entry failed', { index: e.index, kind: req.kind, error: error.message });
    }
  }

  private applyOne(req: InternalRequest, index: number, term: number): unknown {
    switch (req.kind) {
      case 'memberAttrSet': {
        const a = req.memberAttrSet;
        this.membership.setAttributes(a.memberId, { name: a.name, clientURLs: a.clientURLs });
        return undefined;
      }
      case 'clusterVersionSet':
        this.applyClusterVersion(req.clusterVersionSet.version);
        return undefined;
      case 'v2':
        return this.v2.apply(req.v2);
      case 'alarm':
        return this.applyAlarm(req.alarm.action, req.alarm.memberId, req.alarm.alarm);
      default:
        // v3 data: skip what the db already holds (the consistent index makes replay idempotent).
        if (index <= this.kv.consistentIndex()) return undefined;
        return this.kv.apply(req, index, term);
    }
  }

  private applyClusterVersion(version: string): void {
    const prev = this.membership.version;
    const fields = { 'cluster-id': idHex(this.clusterId), 'local-member-id': idHex(this.memberId) };
    if (prev === undefined) this.logger.info('set initial cluster version', { ...fields, 'cluster-version': version });
    else if (prev !== version) this.logger.info('updated cluster version', { ...fields, from: prev, to: version });
    this.membership.version = version;
    // Also kept in the db, where a member of a newer release can read it before it replays anything.
    const known = this.lastClusterVersionInDb();
    if (known === undefined || compareMinor(version, known) > 0) {
      const tx = this.backend.batchTx();
      tx.put('cluster', CLUSTER_VERSION_KEY, Buffer.from(version));
      tx.end();
    }
    if (prev !== version) this.logger.info('enabled capabilities for version', { 'cluster-version': version });
    // Replayed history holds older versions too: only the downgrade direction is fatal here.
    const check = checkDowngrade(this.opts.release.version, version);
    if (!check.ok) {
      this.logger.error(check.reason, fields);
      this.fatal(new FatalStartError(check.reason));
    }
  }

  private applyAlarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: bigint, alarm: AlarmType): unknown {
    if (action === 'ACTIVATE') {
      if (!this.alarms.some((a) => a.memberId === memberId && a.alarm === alarm)) {
        this.alarms.push({ memberId, alarm });
        this.logger.warn('alarm raised', { alarm, from: idHex(memberId) });
      }
      return [{ memberId, alarm }];
    }
    if (action === 'DEACTIVATE') {
      const before = this.alarms.length;
      this.alarms = this.alarms.filter((a) => !(a.memberId === memberId && a.alarm === alarm));
      if (this.alarms.length !== before) this.logger.warn('alarm disarmed', { alarm, from: idHex(memberId) });
      return before !== this.alarms.length ? [{ memberId, alarm }] : [];
    }
    return this.alarms.filter((a) => (memberId === 0n || a.memberId === memberId) && (alarm === 'NONE' || a.alarm === alarm));
  }

  private applyConfChangeEntry(e: Entry): void {
    const cc = decodeConfChange(e.data);
    // The context carries the member (name, URLs) and, for changes proposed here, the waiter id.
    const ctx = cc.context && cc.context.length > 0 ? decodeTagged<Member & { requestId?: bigint }>(cc.context) : undefined;
    this.confState = this.raft.applyConfChange(cc);
    const idHexStr = idHex(cc.nodeId);
    switch (cc.type) {
      case ConfChangeType.AddNode:
      case ConfChangeType.AddLearnerNode: {
        const learner = cc.type === ConfChangeType.AddLearnerNode;
        const existing = this.membership.member(cc.nodeId);
        if (existing && existing.isLearner && !learner) {
          this.membership.promote(cc.nodeId);
          this.logger.info('promoted a learner member to voting member', { 'promoted-member-id': idHexStr });
        } else if (ctx && !existing) {
          this.membership.add({ id: cc.nodeId, name: ctx.name ?? '', peerURLs: ctx.peerURLs ?? [], clientURLs: ctx.clientURLs ?? [], isLearner: learner });
          this.logger.info('added member', { 'cluster-id': idHex(this.clusterId), 'local-member-id': idHex(this.memberId), 'added-peer-id': idHexStr, 'added-peer-peer-urls': ctx.peerURLs, 'added-peer-is-learner': learner });
          if (cc.nodeId !== this.memberId) this.transport.addPeer(cc.nodeId, ctx.peerURLs ?? []);
        }
        break;
      }
      case ConfChangeType.RemoveNode:
        this.membership.remove(cc.nodeId);
        this.logger.info('removed member', { 'cluster-id': idHex(this.clusterId), 'local-member-id': idHex(this.memberId), 'removed-remote-peer-id': idHexStr });
        if (cc.nodeId === this.memberId) {
          this.logger.warn('the local member has been removed from the cluster; shutting down', { 'local-member-id': idHexStr });
          setImmediate(() => void this.stop({ transferLeadership: false }).then(() => this.onRemoved?.()));
        } else {
          this.transport.removePeer(cc.nodeId);
        }
        break;
      case ConfChangeType.UpdateNode:
        if (ctx) {
          this.membership.updatePeerURLs(cc.nodeId, ctx.peerURLs ?? []);
          if (cc.nodeId !== this.memberId) this.transport.updatePeer(cc.nodeId, ctx.peerURLs ?? []);
          this.logger.info('updated member', { 'updated-remote-peer-id': idHexStr, 'updated-remote-peer-urls': ctx.peerURLs });
        }
        break;
    }
    if (ctx?.requestId !== undefined) this.confWaiters.resolve(ctx.requestId, this.membership.list());
  }

  /** Called when this member was removed from the cluster and has stopped. */
  onRemoved?: () => void;

  // ---------------------------------------------------------------------------------------------- snapshots

  private internalState(): Uint8Array {
    const st: InternalState = {
      membership: this.membership.toJSON(),
      v2: this.v2.toJSON(),
      alarms: this.alarms.map((a) => ({ memberId: idHex(a.memberId), alarm: a.alarm })),
    };
    return Buffer.from(JSON.stringify(st));
  }

  private restoreInternalState(data: Uint8Array): void {
    const st = JSON.parse(Buffer.from(data).toString('utf8')) as InternalState;
    this.membership = Membership.fromJSON(st.membership);
    this.v2 = V2Store.fromJSON(st.v2 as { index: number; root: unknown });
    this.alarms = st.alarms.map((a) => ({ memberId: BigInt('0x' + a.memberId), alarm: a.alarm }));
  }

  private async maybeSnapshot(): Promise<void> {
    if (this.appliedIndex - this.snapshotIndex <= this.opts.snapshotCount) return;
    // The db must hold everything up to the snapshot before the snapshot exists (a snapshot without its db
    // is exactly the data loss the start-up check refuses).
    this.kv.forceCommit();
    const snap = this.storage.createSnapshot(this.appliedIndex, this.confState, this.internalState());
    await this.snapshotter.save(snap);
    await this.wal.saveSnapshot({ index: snap.metadata.index, term: snap.metadata.term, confState: snap.metadata.confState });
    this.snapshotIndex = this.appliedIndex;
    const compactTo = this.appliedIndex - this.opts.snapshotCatchUpEntries;
    if (compactTo > this.storage.firstIndex()) {
      this.storage.compact(compactTo);
      this.wal.releaseLockTo(compactTo);
    }
    this.logger.info('saved snapshot', { 'snapshot-index': snap.metadata.index });
    for (const [dir, suffix, max] of [[this.snapDir, '.snap', this.opts.maxSnapshots], [this.walDir, '.wal', this.opts.maxWals]] as const) {
      purgeFiles(this.logger, dir, suffix, max).catch((e) => this.logger.warn('failed to purge old files', { dir, error: (e as Error).message }));
    }
  }

  private async packSnapshotWithDb(internal: Uint8Array): Promise<Uint8Array> {
    this.kv.forceCommit();
    const tmp = join(this.snapDir, `db.send-${process.pid}-${Date.now()}.tmp`);
    try {
      await this.backend.snapshotTo(tmp);
      const db = await readFile(tmp);
      const head = Buffer.alloc(4);
      head.writeUInt32BE(internal.length, 0);
      return Buffer.concat([head, internal, db]);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** A snapshot from the leader: replace the db and the internal state with the leader's. */
  private async receiveSnapshot(snap: Snapshot): Promise<void> {
    const data = Buffer.from(snap.data);
    const n = data.readUInt32BE(0);
    const internal = data.subarray(4, 4 + n);
    const db = data.subarray(4 + n);
    this.logger.info('applying snapshot', { 'snapshot-index': snap.metadata.index, 'db-size': db.length });
    this.backend = this.kv.replaceBackend(db);
    this.restoreInternalState(internal);
    for (const m of this.membership.list()) if (m.id !== this.memberId) this.transport.addPeer(m.id, m.peerURLs);
    const stripped: Snapshot = { metadata: snap.metadata, data: new Uint8Array(internal) };
    await this.snapshotter.save(stripped);
    await this.wal.saveSnapshot({ index: snap.metadata.index, term: snap.metadata.term, confState: snap.metadata.confState });
    this.storage.applySnapshot(stripped);
    this.confState = snap.metadata.confState;
    this.appliedIndex = snap.metadata.index;
    this.snapshotIndex = snap.metadata.index;
    this.appliedWaiters.trigger(this.appliedIndex);
    this.logger.info('applied snapshot', { 'snapshot-index': snap.metadata.index });
  }

  // ---------------------------------------------------------------------------------------------- proposals

  nextRequestId(): bigint {
    this.idCounter++;
    return this.idPrefix | (this.idCounter & 0xffffffffffn);
  }

  requestTimeoutMs(): number {
    return 5000 + 2 * this.opts.electionMs;
  }

  /** Propose a request and resolve with its apply result. */
  async propose<T>(req: InternalRequest, timeoutMs = this.requestTimeoutMs()): Promise<T> {
    if (this.stopped || this.stopping) throw Errors.stopped();
    const data = encodeRequest(req);
    if (data.length > this.opts.maxRequestBytes) throw Errors.requestTooLarge();
    if (this.lead === 0n) await this.waitForLeader(timeoutMs);
    const p = this.proposals.register(req.id, timeoutMs, () => {
      this.stats.proposalsFailed++;
      return this.lead === 0n ? Errors.timeoutDueToLeaderFail() : Errors.timeout();
    });
    this.stats.proposalsPending++;
    // Proposals of one event-loop turn are stepped together by the next ready pass (flushProposals).
    this.proposalBatch.push({ id: req.id, data });
    this.kick();
    try {
      return (await p) as T;
    } finally {
      this.stats.proposalsPending--;
    }
  }

  /** Wait (a bounded time) for an election to finish, as a request arriving between leaders should. */
  async waitForLeader(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + Math.min(timeoutMs, 3 * this.opts.electionMs);
    while (this.lead === 0n) {
      if (this.stopped || this.stopping) throw Errors.stopped();
      if (Date.now() >= deadline) throw Errors.noLeader();
      await sleep(this.opts.tickMs);
    }
  }

  /** Propose a membership change and resolve with the member list once it applied. */
  async proposeConfChange(type: ConfChangeType, nodeId: bigint, member: Partial<Member>): Promise<Member[]> {
    if (this.stopped || this.stopping) throw Errors.stopped();
    if (this.lead === 0n) await this.waitForLeader(this.requestTimeoutMs());
    const requestId = this.nextRequestId();
    const cc: ConfChange = { type, nodeId, context: encodeTagged({ ...member, requestId }) };
    const p = this.confWaiters.register(requestId, this.requestTimeoutMs(), () => Errors.timeout());
    try {
      this.raft.proposeConfChange(cc);
    } catch (e) {
      this.confWaiters.reject(requestId, e instanceof RaftError ? Errors.leaderChanged() : (e as Error));
    }
    this.kick();
    return p;
  }

  /** Resolves when a read issued now may be served locally and be linearizable. */
  async linearizableReadNotify(timeoutMs = this.requestTimeoutMs()): Promise<void> {
    if (this.stopped) throw Errors.stopped();
    if (this.lead === 0n) await this.waitForLeader(timeoutMs);
    return new Promise<void>((resolve, reject) => {
      this.pendingReads.push({ resolve, reject });
      this.sendReadIndex(timeoutMs);
    });
  }

  private sendReadIndex(timeoutMs: number): void {
    if (this.inflightRead || this.pendingReads.length === 0) return;
    if (this.lead === 0n) {
      const waiters = this.pendingReads;
      this.pendingReads = [];
      this.stats.readIndexesFailed += waiters.length;
      for (const w of waiters) w.reject(Errors.noLeader());
      return;
    }
    const waiters = this.pendingReads;
    this.pendingReads = [];
    const deadline = Date.now() + timeoutMs;
    const attempt = () => {
      this.readCounter++;
      const ctxBuf = Buffer.alloc(8);
      ctxBuf.writeBigUInt64BE(this.readCounter);
      // Unanswered read-index requests are sent again (a message may be lost while a peer stream connects).
      const timer = setTimeout(() => {
        if (this.inflightRead?.timer !== timer) return;
        if (Date.now() < deadline && !this.stopped) return attempt();
        this.inflightRead = undefined;
        this.stats.readIndexesFailed += waiters.length;
        for (const w of waiters) w.reject(this.lead === 0n ? Errors.noLeader() : Errors.timeout());
        this.sendReadIndex(this.requestTimeoutMs());
      }, READ_INDEX_RETRY_MS);
      this.inflightRead = { ctx: ctxBuf.toString('hex'), waiters, timer };
      try {
        this.raft.readIndex(ctxBuf);
      } catch {
        /* no leader right now: the retry timer tries again until the deadline */
      }
      this.kick();
    };
    attempt();
  }

  private onReadState(ctx: string, index: number): void {
    const r = this.inflightRead;
    if (!r || r.ctx !== ctx) return;
    clearTimeout(r.timer);
    this.inflightRead = undefined;
    const done = () => {
      for (const w of r.waiters) w.resolve();
    };
    if (this.appliedIndex >= index) done();
    else this.appliedWaiters.wait(index, done);
    if (this.pendingReads.length > 0) setImmediate(() => this.sendReadIndex(this.requestTimeoutMs()));
  }

  // ---------------------------------------------------------------------------------------------- background work

  /** Publish this member's name and client URLs through the log, retrying until it commits. */
  private async publish(): Promise<void> {
    while (!this.stopped && !this.stopping && !this.published) {
      if (this.lead === 0n || !this.membership.member(this.memberId)) {
        await sleep(100);
        continue;
      }
      const attrs = { name: this.opts.name, clientURLs: this.opts.advertiseClientURLs };
      try {
        await this.propose({ id: this.nextRequestId(), kind: 'memberAttrSet', memberAttrSet: { memberId: this.memberId, ...attrs } }, 5000);
        this.published = true;
        this.logger.info('published local member to cluster through raft', {
          'local-member-id': idHex(this.memberId),
          'local-member-attributes': `{Name:${attrs.name} ClientURLs:[${attrs.clientURLs.join(' ')}]}`,
          'request-path': attributesPath(this.memberId),
          'cluster-id': idHex(this.clusterId),
          'publish-timeout': '5s',
        });
      } catch (e) {
        if (!this.stopped && !this.stopping) this.logger.warn('failed to publish local member to cluster through raft', { 'local-member-id': idHex(this.memberId), 'request-path': attributesPath(this.memberId), error: (e as Error).message });
        await sleep(500);
      }
    }
  }

  isPublished(): boolean {
    return this.published;
  }

  /** Resolves once this member is published to the cluster (the reference's ReadyNotify); rejects if it stops first. */
  async readyNotify(): Promise<void> {
    while (!this.published) {
      if (this.stopped || this.stopping) throw Errors.stopped();
      await sleep(20);
    }
  }

  /** Compare versions with the other members; the leader proposes a new cluster version when the lowest moved. */
  private monitoring = false;
  private async monitorVersions(): Promise<void> {
    if (this.stopped || this.stopping || this.monitoring) return;
    this.monitoring = true;
    try {
      const members = this.membership.list();
      const versions = await Promise.all(members.map(async (m) => {
        if (m.id === this.memberId) return this.opts.release.version;
        return fetchPeerVersion(m.peerURLs, this.opts.peerTls);
      }));
      members.forEach((m, i) => this.peerVersions.set(m.id, versions[i]));
      const local = this.opts.release.version;
      const higher = higherVersionedMembers(local, members.map((m, i) => ({ id: m.id, version: versions[i] })));
      if (higher.length > 0) {
        const lv = local.split('.').slice(0, 2).join('.');
        this.logger.warn(`the local svc version ${lv} is not up-to-date`, { 'local-member-version': lv });
        for (const h of higher) {
          this.logger.warn(`member ${idHex(h.id)} has a higher version ${h.version}`, { 'remote-member-id': idHex(h.id), 'remote-member-version': h.version });
          if (this.role === StateRole.Leader) this.logger.warn('leader found higher-versioned member', { 'local-member-version': lv, 'remote-member-id': idHex(h.id), 'remote-member-version': h.version });
        }
      }
      if (this.role !== StateRole.Leader || members.length === 0) return;
      const current = this.membership.version;
      const d = decideClusterVersion(current, versions);
      if (d.kind !== 'set') return;
      if (current !== undefined && compareMinor(d.version, current) <= 0) return;
      if (d.initial) this.logger.info('setting up initial cluster version', { 'cluster-version': d.version });
      else this.logger.info('updating cluster version', { from: current, to: d.version });
      await this.propose({ id: this.nextRequestId(), kind: 'clusterVersionSet', clusterVersionSet: { version: d.version } });
      this.logger.info('cluster version is updated', { 'cluster-version': d.version });
    } catch (e) {
      if (!this.stopped && !this.stopping) this.logger.warn('failed to update cluster version', { error: (e as Error).message });
    } finally {
      this.monitoring = false;
    }
  }

  /** The versions last fetched from the members (for the warnings and /metrics). */
  memberVersions(): Map<bigint, string | undefined> {
    return this.peerVersions;
  }

  /** Lease calls only the leader can answer (it alone tracks expiry); a follower asks it over the peer URL. */
  async forwardLeaseCall<T>(op: 'renew' | 'ttl', body: object): Promise<T> {
    const leader = this.membership.member(this.lead);
    if (this.lead === 0n || !leader) throw Errors.noLeader();
    let lastErr: Error = Errors.noLeader();
    for (const u of leader.peerURLs) {
      try {
        const res = await peerRequest(new URL(`/leases/${op}`, u).toString(), { method: 'POST', body: JSON.stringify(body), timeoutMs: this.requestTimeoutMs(), tls: this.opts.peerTls });
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
  async renewLease(id: bigint): Promise<number> {
    if (this.isLeader()) return this.kv.renewLease(id);
    return this.forwardLeaseRenew(id);
  }

  async forwardLeaseRenew(id: bigint): Promise<number> {
    return (await this.forwardLeaseCall<{ ttl: number }>('renew', { id: id.toString() })).ttl;
  }

  /** The leader's side of forwardLeaseCall. */
  leaseCallForPeer(op: string, body: string): { status: number; json: object } {
    if (this.role !== StateRole.Leader) return { status: 503, json: { error: Errors.notLeader().message } };
    try {
      const req = JSON.parse(body) as { id: string; keys?: boolean };
      const id = BigInt(req.id);
      if (op === 'renew') return { status: 200, json: { ttl: this.kv.lessor.renew(id) } };
      if (op === 'ttl') {
        if (!this.kv.lessor.exists(id)) return { status: 404, json: { error: Errors.leaseNotFound().message } };
        const t = this.kv.lessor.timeToLive(id, !!req.keys);
        return { status: 200, json: { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: (t.keys ?? []).map((k) => Buffer.from(k).toString('base64')) } };
      }
      return { status: 404, json: { error: `unknown lease call ${op}` } };
    } catch (e) {
      return { status: 404, json: { error: (e as Error).message } };
    }
  }

  private async checkLeases(): Promise<void> {
    if (this.role !== StateRole.Leader || this.stopped || this.stopping) return;
    for (const id of this.kv.lessor.expired(Date.now()).slice(0, 16)) {
      this.propose({ id: this.nextRequestId(), kind: 'leaseRevoke', leaseRevoke: { id } }).catch((e) => {
        this.logger.warn('failed to revoke an expired lease', { 'lease-id': id.toString(16), error: (e as Error).message });
      });
    }
  }

  // ---------------------------------------------------------------------------------------------- status

  status(): ServerStatus {
    const st = this.raft.status();
    const me = this.membership.member(this.memberId);
    return {
      memberId: this.memberId,
      clusterId: this.clusterId,
      leader: this.lead,
      isLeader: this.role === StateRole.Leader,
      term: st.hardState.term,
      commitIndex: st.hardState.commit,
      appliedIndex: this.appliedIndex,
      isLearner: !!me?.isLearner,
      dbSize: this.backend.size(),
      dbSizeInUse: this.backend.sizeInUse(),
    };
  }

  /** Is a feature of release `minor` on? Only when this member and the cluster version both reach it. */
  capable(minor: string): boolean {
    const cv = this.membership.version;
    return cv !== undefined && compareMinor(cv, minor) >= 0 && compareMinor(this.opts.release.minor, minor) >= 0;
  }

  isLeader(): boolean {
    return this.role === StateRole.Leader;
  }

  /** Move leadership to `to`, waiting until it took over. */
  async moveLeader(to: bigint, timeoutMs = this.opts.electionMs * 7): Promise<void> {
    if (this.role !== StateRole.Leader) throw Errors.notLeader();
    const m = this.membership.member(to);
    if (!m || m.isLearner) throw Errors.badLeaderTransferee();
    if (to === this.memberId) return;
    this.raft.transferLeader(to);
    this.kick();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.lead !== 0n && this.lead !== this.memberId) return;
      await sleep(this.opts.tickMs);
    }
    throw Errors.timeoutLeaderTransfer();
  }

  /** The voting member with the longest log (ties: connected longest) to hand leadership to. */
  pickTransferee(): bigint | undefined {
    const st = this.raft.status();
    let best: { id: bigint; match: number; since: number } | undefined;
    for (const m of this.membership.voters()) {
      if (m.id === this.memberId) continue;
      const match = st.progress?.get(m.id)?.match ?? 0;
      const since = this.transport.activeSince(m.id);
      if (since === undefined) continue;
      if (!best || match > best.match || (match === best.match && since < best.since)) best = { id: m.id, match, since };
    }
    return best?.id;
  }

  // ---------------------------------------------------------------------------------------------- for the API

  revision(): number {
    return this.kv.rev();
  }

  get auth(): AuthStore {
    return this.kv.auth;
  }

  clusterVersion(): string | undefined {
    return this.membership.version;
  }

  /** Refuse writes while NOSPACE is raised, and raise it when this write would pass the quota. */
  async checkQuota(extra: number): Promise<void> {
    if (this.alarms.some((a) => a.alarm === 'NOSPACE')) throw Errors.noSpace();
    const quota = this.opts.quotaBackendBytes;
    if (quota > 0 && this.backend.size() + extra > quota) {
      this.logger.warn('database space exceeded; raising the NOSPACE alarm', { 'quota-size-bytes': quota, 'current-db-size-bytes': this.backend.size() });
      await this.propose({ id: this.nextRequestId(), kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: this.memberId, alarm: 'NOSPACE' } }).catch(() => undefined);
      throw Errors.noSpace();
    }
  }

  async leaseTimeToLive(id: bigint, keys: boolean): Promise<LeaseTtl | undefined> {
    if (!this.kv.lessor.exists(id)) return undefined;
    if (!this.isLeader()) {
      // Only the leader tracks expiry: ask it for the remaining time.
      try {
        const t = await this.forwardLeaseCall<{ ttl: number; grantedTtl: number; keys: string[] }>('ttl', { id: id.toString(), keys });
        return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys.map((k) => Buffer.from(k, 'base64')) };
      } catch (e) {
        if ((e as Error).message === Errors.leaseNotFound().message) return undefined;
        throw e;
      }
    }
    const t = this.kv.lessor.timeToLive(id, keys);
    return { ttl: t.ttl, grantedTtl: t.grantedTtl, keys: t.keys ?? [] };
  }

  leaseIds(): bigint[] {
    return this.kv.lessor.leases().map((l) => l.id);
  }

  members(): Member[] {
    return this.membership.list();
  }

  async addMember(peerURLs: string[], isLearner: boolean): Promise<{ member: Member; members: Member[] }> {
    const id = computeMemberId(peerURLs, this.opts.initialClusterToken, Date.now());
    this.membership.validateAdd(id, peerURLs);
    if (this.opts.strictReconfigCheck) this.mayAddMember(isLearner, peerURLs);
    const member: Member = { id, name: '', peerURLs, clientURLs: [], isLearner };
    const members = await this.proposeConfChange(isLearner ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode, id, member);
    return { member, members };
  }

  /**
   * Strict reconfiguration (--strict-reconfig-check), as the reference's mayAddMember in 3.4 and 3.5: a voter is
   * refused while too few voters have ever started (published their name) to keep a quorum once it is added;
   * then any member, learners included, is refused unless this member has been connected to every voter for
   * the reference's health interval (5 s).
   */
  private mayAddMember(isLearner: boolean, peerURLs: string[]): void {
    const voters = this.membership.voters();
    const requested = { 'local-member-id': idHex(this.memberId), 'requested-member-add': { peerURLs, isLearner } };
    if (!isLearner && !readyToAddVoter(voters)) {
      this.logger.warn('rejecting member add request; not enough healthy members', { ...requested, error: Errors.memberNotEnoughStarted().message });
      throw Errors.memberNotEnoughStarted();
    }
    const since = Date.now() - HEALTH_INTERVAL_MS;
    const connected = voters.every((m) => {
      if (m.id === this.memberId) return true;
      const t = this.transport.activeSince(m.id);
      return t !== undefined && t < since;
    });
    if (!connected) {
      this.logger.warn('rejecting member add request; local member has not been connected to all peers, reconfigure breaks active quorum', { ...requested, error: Errors.unhealthy().message });
      throw Errors.unhealthy();
    }
  }

  async removeMember(id: bigint): Promise<Member[]> {
    this.membership.validateRemove(id);
    return this.proposeConfChange(ConfChangeType.RemoveNode, id, {});
  }

  async updateMember(id: bigint, peerURLs: string[]): Promise<Member[]> {
    this.membership.validateUpdate(id, peerURLs);
    return this.proposeConfChange(ConfChangeType.UpdateNode, id, { peerURLs });
  }

  /** A learner is promoted only by the leader, once its log is within 90% of the leader's. */
  async promoteMember(id: bigint): Promise<Member[]> {
    this.membership.validatePromote(id);
    if (!this.isLeader()) throw Errors.notLeader();
    const progress = this.raft.status().progress?.get(id);
    const leaderMatch = this.raft.status().progress?.get(this.memberId)?.match ?? 0;
    if (!progress || progress.match < leaderMatch * 0.9) throw Errors.learnerNotReady();
    return this.proposeConfChange(ConfChangeType.AddNode, id, {});
  }

  // ---------------------------------------------------------------------------------------------- stop

  private fatalHandler?: (e: Error) => void;
  /** What to do when the member cannot go on (the CLI exits; an embedding program is told). */
  onFatal(fn: (e: Error) => void): void {
    this.fatalHandler = fn;
  }

  private fatal(e: Error): void {
    void this.stop({ transferLeadership: false }).finally(() => this.fatalHandler?.(e));
  }

  async stop(o: { transferLeadership?: boolean } = {}): Promise<void> {
    if (this.stopped || this.stopping) return;
    this.stopping = true;
    if (o.transferLeadership !== false) await this.transferLeadershipOnStop();
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.stopCompactor?.();
    while (this.processing) await sleep(5);
    this.proposalBatch = [];
    this.proposals.rejectAll(() => Errors.stopped());
    this.confWaiters.rejectAll(() => Errors.stopped());
    if (this.inflightRead) {
      clearTimeout(this.inflightRead.timer);
      for (const w of this.inflightRead.waiters) w.reject(Errors.stopped());
      this.inflightRead = undefined;
    }
    for (const w of this.pendingReads) w.reject(Errors.stopped());
    this.pendingReads = [];
    await this.transport.stop();
    await this.peerServer?.close();
    await this.wal.close();
    this.kv.close();
  }

  private async transferLeadershipOnStop(): Promise<void> {
    const fields = { 'local-member-id': idHex(this.memberId) };
    if (this.role !== StateRole.Leader) {
      this.logger.info('skipped leadership transfer; local server is not leader', { ...fields, 'current-leader-member-id': idHex(this.lead) });
      return;
    }
    if (this.membership.voters().length <= 1) {
      this.logger.info('skipped leadership transfer for single voting member cluster', fields);
      return;
    }
    const to = this.pickTransferee();
    if (to === undefined) {
      this.logger.warn('leadership transfer failed', { ...fields, error: 'no active voting member to transfer to' });
      return;
    }
    const start = process.hrtime.bigint();
    this.logger.info('leadership transfer starting', { ...fields, 'current-leader-member-id': idHex(this.memberId), 'transferee-member-id': idHex(to) });
    try {
      await this.moveLeader(to, 7000);
      const took = Number(process.hrtime.bigint() - start) / 1e6;
      this.logger.info('leadership transfer finished', { ...fields, 'old-leader-member-id': idHex(this.memberId), 'new-leader-member-id': idHex(this.lead), took: formatDuration(took) });
    } catch (e) {
      this.logger.warn('leadership transfer failed', { ...fields, error: (e as Error).message });
    }
  }

  isStopped(): boolean {
    return this.stopped;
  }

}

async function fetchPeerVersion(urls: string[], tls: PeerTlsClient | undefined): Promise<string | undefined> {
  for (const u of urls) {
    try {
      const res = await peerRequest(new URL('/version', u).toString(), { timeoutMs: 1000, tls });
      if (res.status !== 200) continue;
      const j = JSON.parse(res.body) as { etcdserver?: string };
      if (typeof j.etcdserver === 'string') return j.etcdserver;
    } catch {
      /* try the next URL */
    }
  }
  return undefined;
}

const CLUSTER_VERSION_KEY = new TextEncoder().encode('clusterVersion');

/** How long a read-index request may go unanswered before it is sent again (the reference: 500 ms). */
const READ_INDEX_RETRY_MS = 500;

/** An unsigned 64-bit protobuf value (the Long class protobufjs uses). */
function toLong(v: bigint): protobuf.Long {
  const L = protobuf.util.Long as unknown as { fromString(s: string, unsigned: boolean): protobuf.Long };
  return L.fromString(v.toString(), true);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A Go-style duration string ("2.55ms", "1.2s"), as the reference prints durations. */
export function formatDuration(ms: number): string {
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  return `${+(ms / 1000).toFixed(3)}s`;
}

/** How long a peer must have been connected before a member add counts it as healthy (the reference's HealthInterval). */
export const HEALTH_INTERVAL_MS = 5000;

/**
 * Would the voters still have a quorum of started members with one more (not yet started) voter? A member has
 * started once it published its name. The reference's one exception: a second voter may join a 1-member cluster
 * (how a cluster restored from a snapshot on one member grows), although there is no quorum until it starts.
 */
export function readyToAddVoter(voters: Member[]): boolean {
  const members = voters.length + 1;
  const started = voters.filter((m) => m.name !== '').length;
  if (started === 1 && members === 2) return true;
  return started >= Math.floor(members / 2) + 1;
}
