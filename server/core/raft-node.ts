// The raft node: the ready loop over the consensus core (RawNode), its in-memory log (MemoryStorage) and the
// WAL. It ticks, steps peer messages, persists what the core hands out, sends messages, hands committed entries
// to the applier and read states to the proposer, and takes and installs snapshots.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RawNode, RaftError, type MemoryStorage } from '../raft/index.js';
import { MessageType, StateRole, type ConfChange, type ConfState, type Entry, type Message, type Ready, type Snapshot } from '../raft/types.js';
import { purgeFiles, type Wal } from '../storage/wal.js';
import type { Snapshotter } from '../storage/snapshotter.js';
import { idHex } from '../cluster/ids.js';
import type { Logger } from '../log/logger.js';
import { packageLogger } from '../log/create-logger.js';
import type { Observers } from './interfaces.js';
import type { Lifecycle } from './lifecycle.js';
import { sleep } from './lifecycle.js';

/** The peers' side of the transport. */
export interface PeerSender {
  send(msgs: Message[]): void;
  /** Put what was queued on the wire now. */
  flush(): void;
}

/** The v3 db as snapshots need it. */
export interface SnapshotDb {
  /** Commit (and fsync) everything applied so far. */
  forceCommit(): void;
  /** Copy the db, consistent, to a file. */
  snapshotTo(path: string): Promise<void>;
}

/** Hears that the consensus core refused a queued proposal (no leader, a leadership transfer under way). */
export type ProposalRefused = (e: unknown) => void;

export interface RaftNodeHooks {
  onLeaderChange(lead: bigint, prevLead: bigint, term: number): void;
  onRoleChange(role: StateRole, prevRole: StateRole): void;
  applyEntries(entries: Entry[]): void;
  onReadState(ctx: string, index: number): void;
  /** A snapshot from the leader: replace the db with `db` and take the internal state (before it is saved). */
  restoreSnapshot(internal: Uint8Array, db: Uint8Array): void;
  /** The snapshot is saved: everything up to `index` is applied. */
  snapshotApplied(index: number): void;
  /** What a local snapshot holds: the applied index and the internal state. */
  appliedIndex(): number;
  internalState(): Uint8Array;
  /** Is this a member removed from the cluster (whose messages are dropped)? */
  isRemoved(id: bigint): boolean;
  /** The loop failed: the member must stop. */
  fatal(e: Error): void;
}

export interface RaftNodeOptions {
  memberId: bigint;
  logger: Logger;
  tickMs: number;
  electionMs: number;
  preVote: boolean;
  snapshotCount: number;
  snapshotCatchUpEntries: number;
  maxSnapshots: number;
  maxWals: number;
  snapDir: string;
  walDir: string;
}

export interface RaftNodeState {
  storage: MemoryStorage;
  wal: Wal;
  snapshotter: Snapshotter;
  confState: ConfState;
  appliedIndex: number;
  snapshotIndex: number;
}

export class RaftNode {
  readonly raft: RawNode;
  private readonly storage: MemoryStorage;
  readonly wal: Wal;
  private readonly snapshotter: Snapshotter;
  private confState: ConfState;
  private snapshotIndex: number;
  /** Snapshot after this pass whatever --snapshot-count says (a downgrade lowered the cluster version). */
  private snapshotForced = false;
  private processing = false;
  private _lead = 0n;
  private _term = 0;
  private _role: StateRole = StateRole.Follower;
  private peers!: PeerSender;
  private db!: SnapshotDb;
  /** Proposals waiting for the next ready pass, which steps them as one batch (see propose). */
  private queued: Uint8Array[] = [];
  private refusals: ProposalRefused[] = [];

  constructor(
    st: RaftNodeState,
    private readonly hooks: RaftNodeHooks,
    private readonly lifecycle: Lifecycle,
    private readonly observers: Observers,
    private readonly opts: RaftNodeOptions,
  ) {
    this.storage = st.storage;
    this.wal = st.wal;
    this.snapshotter = st.snapshotter;
    this.confState = st.confState;
    this.snapshotIndex = st.snapshotIndex;
    this.raft = new RawNode({
      id: opts.memberId,
      electionTick: this.electionTicks,
      heartbeatTick: 1,
      storage: this.storage,
      applied: st.appliedIndex,
      maxSizePerMsg: 1024 * 1024,
      maxInflightMsgs: 512,
      preVote: opts.preVote,
      checkQuorum: true,
      random: Math.random,
      logger: packageLogger(opts.logger, 'raft'),
    });
  }

  /** The transport and the db, which are made after the node (they call into it). */
  attach(peers: PeerSender, db: SnapshotDb): void {
    this.peers = peers;
    this.db = db;
  }

  /** The current leader (0n: none). */
  get lead(): bigint {
    return this._lead;
  }

  /** The term of the last hard state handed out. */
  get term(): number {
    return this._term;
  }

  get role(): StateRole {
    return this._role;
  }

  isLeader(): boolean {
    return this._role === StateRole.Leader;
  }

  /** The term of the consensus core's hard state, now. */
  currentTerm(): number {
    return this.raft.status().hardState.term;
  }

  // ---------------------------------------------------------------------------------------------- input

  tick(): void {
    if (this.lifecycle.stopped) return;
    this.raft.tick();
    this.kick();
  }

  /** Ticks of an election timeout (--election-timeout / --heartbeat-interval). */
  get electionTicks(): number {
    return Math.max(2, Math.round(this.opts.electionMs / this.opts.tickMs));
  }

  /** `n` ticks at once (--initial-election-tick-advance). */
  advanceTicks(n: number): void {
    if (this.lifecycle.stopped) return;
    for (let i = 0; i < n; i++) this.raft.tick();
    this.kick();
  }

  step(m: Message): void {
    if (this.lifecycle.stopped) return;
    if (this.hooks.isRemoved(m.from)) return;
    try {
      this.raft.step(m);
    } catch (e) {
      if (!(e instanceof RaftError)) throw e;
    }
    this.kick();
  }

  /**
   * Queue an entry for the next ready pass: the proposals of one event-loop turn are stepped together, so the
   * leader sends one append per follower for all of them. `refused` hears when the core drops the batch.
   */
  propose(data: Uint8Array, refused: ProposalRefused): void {
    this.queued.push(data);
    this.refusals.push(refused);
    this.kick();
  }

  /** Step what was queued since the last pass as one batch. */
  private stepQueued(): void {
    if (this.queued.length === 0) return;
    const data = this.queued;
    const refusals = this.refusals;
    this.queued = [];
    this.refusals = [];
    try {
      this.raft.proposeMany(data);
    } catch (e) {
      for (const refused of refusals) refused(e);
    }
  }

  proposeConfChange(cc: ConfChange): void {
    this.raft.proposeConfChange(cc);
  }

  readIndex(ctx: Uint8Array): void {
    this.raft.readIndex(ctx);
  }

  applyConfChange(cc: ConfChange): void {
    this.confState = this.raft.applyConfChange(cc);
  }

  transferLeader(to: bigint): void {
    this.raft.transferLeader(to);
  }

  /** Replication progress of each peer (the leader's view; undefined on a follower). */
  progress(): Map<bigint, { match: number }> | undefined {
    return this.raft.status().progress;
  }

  reportUnreachable(id: bigint): void {
    try { this.raft.reportUnreachable(id); } catch { /* not a peer any more */ }
  }

  reportSnapshot(id: bigint, ok: boolean): void {
    try { this.raft.reportSnapshot(id, ok); } catch { /* not a peer any more */ }
    this.kick();
  }

  // ---------------------------------------------------------------------------------------------- the loop

  /** Schedule a pass over the ready state; passes never overlap. */
  kick(): void {
    if (this.processing || this.lifecycle.stopped) return;
    this.processing = true;
    setImmediate(() => void this.processReady());
  }

  /** Resolves once no ready pass runs (after the lifecycle says stopped, none starts). */
  async drained(): Promise<void> {
    while (this.processing) await sleep(5);
  }

  private async processReady(): Promise<void> {
    try {
      while (!this.lifecycle.stopped) {
        this.stepQueued();
        if (!this.raft.hasReady()) break;
        const rd = this.raft.ready();
        await this.handleReady(rd);
      }
    } catch (e) {
      // the cause in `error` (what an operator shows), where it came from in `stack`
      this.opts.logger.error('consensus loop failed; stopping the member', { error: (e as Error).message ?? String(e), stack: (e as Error).stack });
      this.hooks.fatal(e as Error);
    } finally {
      this.processing = false;
    }
    if (!this.lifecycle.stopped && (this.queued.length > 0 || this.raft.hasReady())) this.kick();
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.onSoftState(rd.softState.lead, rd.softState.role);
    if (rd.hardState) this._term = rd.hardState.term;
    const isLeader = this._role === StateRole.Leader;
    // A leader may send while it writes its own log (the followers persist in parallel); a follower must not
    // acknowledge entries it has not persisted.
    if (isLeader) {
      this.send(rd.messages);
      // The WAL write below blocks the event loop: put the appends on the wire first so the followers' disk
      // writes overlap the leader's.
      this.peers.flush();
    }

    const snapshot = rd.snapshot && rd.snapshot.metadata.index > 0 ? rd.snapshot : undefined;
    if (snapshot) await this.receiveSnapshot(snapshot);
    // Committed entries are durable on a quorum already: apply them while this member's own write is under way
    // (the leader counts its own copy only once persisted, so nothing here outruns the quorum).
    if (rd.committedEntries.length > 0) this.hooks.applyEntries(rd.committedEntries);
    for (const rs of rd.readStates) this.hooks.onReadState(Buffer.from(rs.requestCtx).toString('hex'), rs.index);
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
      this.peers.flush();
    }
    this.raft.advance(rd);
    await this.maybeSnapshot();
  }

  private onSoftState(lead: bigint, role: StateRole): void {
    const prevLead = this._lead;
    const prevRole = this._role;
    this._lead = lead;
    this._role = role;
    if (lead !== prevLead) {
      const fields = { 'local-member-id': idHex(this.opts.memberId) };
      if (lead !== 0n) this.opts.logger.info(prevLead === 0n ? 'elected leader' : 'changed leader', { ...fields, 'leader-member-id': idHex(lead), term: this.currentTerm() });
      else this.opts.logger.info('lost leader', { ...fields, 'previous-leader-member-id': idHex(prevLead) });
      this.hooks.onLeaderChange(lead, prevLead, this.currentTerm());
    }
    if (role !== prevRole) this.hooks.onRoleChange(role, prevRole);
  }

  private send(msgs: Message[]): void {
    if (msgs.length === 0) return;
    const out: Message[] = [];
    for (const m of msgs) {
      if (m.type === MessageType.Snap && m.snapshot) {
        // The consensus snapshot carries the internal state only; the v3 db travels with it to the follower.
        const snap = m.snapshot;
        this.packSnapshotWithDb(snap.data).then(
          (data) => this.peers.send([{ ...m, snapshot: { metadata: snap.metadata, data } }]),
          (e) => {
            this.opts.logger.warn('failed to prepare a snapshot for a follower', { 'remote-peer-id': idHex(m.to), error: (e as Error).message });
            try { this.raft.reportSnapshot(m.to, false); } catch { /* gone */ }
          },
        );
      } else {
        out.push(m);
      }
    }
    this.peers.send(out);
  }

  // ---------------------------------------------------------------------------------------------- snapshots

  /** Take a snapshot at the end of this ready pass. */
  forceSnapshot(): void {
    this.snapshotForced = true;
  }

  private async maybeSnapshot(): Promise<void> {
    const applied = this.hooks.appliedIndex();
    if (applied - this.snapshotIndex <= this.opts.snapshotCount && !(this.snapshotForced && applied > this.snapshotIndex)) return;
    this.snapshotForced = false;
    const { logger } = this.opts;
    // The db must hold everything up to the snapshot before the snapshot exists (a snapshot without its db
    // is exactly the data loss the start-up check refuses).
    this.db.forceCommit();
    const snap = this.storage.createSnapshot(applied, this.confState, this.hooks.internalState());
    await this.snapshotter.save(snap);
    await this.wal.saveSnapshot({ index: snap.metadata.index, term: snap.metadata.term, confState: snap.metadata.confState });
    this.snapshotIndex = applied;
    const compactTo = applied - this.opts.snapshotCatchUpEntries;
    if (compactTo > this.storage.firstIndex()) {
      this.storage.compact(compactTo);
      this.wal.releaseLockTo(compactTo);
    }
    logger.info('saved snapshot', { 'snapshot-index': snap.metadata.index });
    for (const [dir, suffix, max] of [[this.opts.snapDir, '.snap', this.opts.maxSnapshots], [this.opts.walDir, '.wal', this.opts.maxWals]] as const) {
      purgeFiles(logger, dir, suffix, max).catch((e) => logger.warn('failed to purge old files', { dir, error: (e as Error).message }));
    }
  }

  private async packSnapshotWithDb(internal: Uint8Array): Promise<Uint8Array> {
    this.db.forceCommit();
    const tmp = join(this.opts.snapDir, `db.send-${process.pid}-${Date.now()}.tmp`);
    try {
      await this.db.snapshotTo(tmp);
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
    this.opts.logger.info('applying snapshot', { 'snapshot-index': snap.metadata.index, 'db-size': db.length });
    this.hooks.restoreSnapshot(internal, db);
    const stripped: Snapshot = { metadata: snap.metadata, data: new Uint8Array(internal) };
    await this.snapshotter.save(stripped);
    await this.wal.saveSnapshot({ index: snap.metadata.index, term: snap.metadata.term, confState: snap.metadata.confState });
    this.storage.applySnapshot(stripped);
    this.confState = snap.metadata.confState;
    this.snapshotIndex = snap.metadata.index;
    this.hooks.snapshotApplied(snap.metadata.index);
    this.opts.logger.info('applied snapshot', { 'snapshot-index': snap.metadata.index });
  }
}
