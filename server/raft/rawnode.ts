// The caller's handle on the consensus core. The caller drives it:
//
//   1. call tick() on a timer and step(m) for every message from the network;
//   2. while hasReady(): rd = ready(), then IN THIS ORDER
//        a. persist rd.snapshot (applySnapshot), rd.entries (append) and rd.hardState (setHardState)
//           to the storage, synced to disk when rd.mustSync;
//        b. send rd.messages. A follower must persist first (its acks promise durability); a leader
//           may send before or while persisting: it counts its own copy only at advance();
//        c. apply rd.snapshot then rd.committedEntries to the state machine, calling
//           applyConfChange for each ConfChange entry; serve rd.readStates once applied >= their index;
//        d. advance(rd). Do not call ready() again before advance(); tick()/step()/propose() may be
//           called in between (e.g. while an asynchronous disk write is in progress).
//
// Nothing here reads a clock, touches a socket or a disk, or draws randomness other than cfg.random.

import { encodeConfChange } from './confchange-codec.js';
import { ProposalDroppedError, RaftError } from './errors.js';
import { ProgressState } from './progress.js';
import { Raft } from './raft.js';
import type { MemoryStorage } from './storage.js';
import type { ConfChange, ConfState, Entry, HardState, Message, NodeId, Ready, SoftState } from './types.js';
import { ConfChangeType, EntryType, MessageType, NONE, StateRole } from './types.js';
import { isLocalMsg, isResponseMsg, newMessage } from './util.js';

export type { RaftConfig } from './config.js';
import type { RaftConfig } from './config.js';

export type { Ready } from './types.js';

/** The leader's view of one member. */
export interface PeerProgress {
  match: number;
  next: number;
  state: ProgressState;
  recentActive: boolean;
  isLearner: boolean;
}

/** A snapshot of the node's consensus state for status endpoints and tests. */
export interface RaftStatus {
  id: NodeId;
  hardState: HardState;
  softState: SoftState;
  applied: number;
  leadTransferee: NodeId;
  /** Per member, only when this node is the leader. */
  progress?: Map<NodeId, PeerProgress>;
  confState: ConfState;
}

/** A member's consensus core, driven through the Ready/advance loop. */
export class RawNode {
  readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;

  constructor(cfg: RaftConfig) {
    this.raft = new Raft(cfg);
    this.prevSoftState = this.raft.softState();
    this.prevHardState = this.raft.hardState();
  }

  /**
   * Prepares empty storage for a brand-new cluster: one committed AddNode entry per peer at term 1.
   * The first Ready hands them out as committedEntries; apply them with applyConfChange.
   */
  static bootstrap(storage: MemoryStorage, peers: { id: NodeId; context: Uint8Array }[]): void {
    if (peers.length === 0) throw new RaftError('InvalidConfig', 'must provide at least one peer to bootstrap');
    if (storage.lastIndex() !== 0) throw new RaftError('InvalidConfig', "can't bootstrap a nonempty Storage");
    const ents: Entry[] = peers.map((p, i) => ({
      term: 1,
      index: i + 1,
      type: EntryType.ConfChange,
      data: encodeConfChange({ type: ConfChangeType.AddNode, nodeId: p.id, context: p.context }),
    }));
    storage.append(ents);
    storage.setHardState({ term: 1, vote: NONE, commit: ents.length });
  }

  /** One tick of the logical clock. */
  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (pre-vote first when enabled). */
  campaign(): void {
    this.raft.step(newMessage({ type: MessageType.Hup, from: this.raft.id }));
  }

  /** Proposes data for the log; throws ProposalDroppedError when it cannot be accepted now. */
  propose(data: Uint8Array): void {
    this.raft.step(
      newMessage({ type: MessageType.Prop, from: this.raft.id, entries: [{ term: 0, index: 0, type: EntryType.Normal, data }] }),
    );
  }

  /** Proposes several entries in one step (one append message per follower instead of one each). */
  proposeMany(data: Uint8Array[]): void {
    if (data.length === 0) return;
    const entries: Entry[] = new Array(data.length);
    for (let i = 0; i < data.length; i++) entries[i] = { term: 0, index: 0, type: EntryType.Normal, data: data[i] };
    this.raft.step(newMessage({ type: MessageType.Prop, from: this.raft.id, entries }));
  }

  /** Proposes a membership change; throws while another is pending on this leader. */
  proposeConfChange(cc: ConfChange): void {
    const r = this.raft;
    if (r.state === StateRole.Leader && r.pendingConfIndex > r.raftLog.applied) {
      throw new RaftError('ConfChangePending', 'a configuration change is already pending; propose after it is applied');
    }
    this.raft.step(
      newMessage({
        type: MessageType.Prop,
        from: r.id,
        entries: [{ term: 0, index: 0, type: EntryType.ConfChange, data: encodeConfChange(cc) }],
      }),
    );
  }

  /** Feeds a message from a peer. Throws for local-only message types. */
  step(m: Message): void {
    if (isLocalMsg(m.type)) throw new RaftError('StepLocalMsg', `raft: cannot step raft local message ${m.type}`);
    if (isResponseMsg(m.type) && !this.raft.prs.progress.has(m.from)) return; // from a member we no longer track
    try {
      this.raft.step(m);
    } catch (e) {
      // A forwarded proposal we cannot take is lost like a dropped packet; its proposer times out.
      if (e instanceof ProposalDroppedError) return;
      throw e;
    }
  }

  /** Requests a linearizable read point; the answer arrives in Ready.readStates (dropped silently without a leader). */
  readIndex(requestCtx: Uint8Array): void {
    this.raft.step(newMessage({ type: MessageType.ReadIndex, from: this.raft.id, context: requestCtx }));
  }

  /** Asks the leader to hand leadership to `transferee` (a voting member). */
  transferLeader(transferee: NodeId): void {
    this.raft.step(newMessage({ type: MessageType.TransferLeader, from: transferee }));
  }

  /** Applies a committed ConfChange entry's change; returns the new membership. */
  applyConfChange(cc: ConfChange): ConfState {
    return this.raft.applyConfChange(cc);
  }

  /** Whether ready() has anything to hand out. */
  hasReady(): boolean {
    const r = this.raft;
    if (r.lead !== this.prevSoftState.lead || r.state !== this.prevSoftState.role) return true;
    const hs = this.prevHardState;
    if (r.term !== hs.term || r.vote !== hs.vote || r.raftLog.committed !== hs.commit) return true;
    if (r.raftLog.hasPendingSnapshot()) return true;
    if (r.msgs.length > 0 || r.raftLog.unstable.entries.length > 0 || r.raftLog.hasNextEnts()) return true;
    return r.readStates.length > 0;
  }

  /** What to persist, send and apply now. Call advance(rd) when done with it. */
  ready(): Ready {
    const r = this.raft;
    // unstableEntries() is a copy: the caller may propose before advance(), which appends to the tail.
    const entries = r.raftLog.unstableEntries();
    const rd: Ready = {
      entries,
      committedEntries: r.raftLog.nextEnts(),
      messages: r.msgs,
      readStates: r.readStates,
      mustSync: false,
    };
    r.msgs = [];
    r.readStates = [];
    const ss = r.softState();
    if (ss.lead !== this.prevSoftState.lead || ss.role !== this.prevSoftState.role) {
      rd.softState = ss;
      this.prevSoftState = ss;
    }
    const hs = r.hardState();
    const prev = this.prevHardState;
    if (hs.term !== prev.term || hs.vote !== prev.vote || hs.commit !== prev.commit) rd.hardState = hs;
    if (r.raftLog.unstable.snapshot) rd.snapshot = r.raftLog.unstable.snapshot;
    rd.mustSync = entries.length > 0 || hs.term !== prev.term || hs.vote !== prev.vote;
    return rd;
  }

  /** Tells the node that rd was persisted, sent and applied. */
  advance(rd: Ready): void {
    const log = this.raft.raftLog;
    if (rd.hardState) this.prevHardState = rd.hardState;
    if (rd.committedEntries.length > 0) log.appliedTo(rd.committedEntries[rd.committedEntries.length - 1].index);
    if (rd.entries.length > 0) {
      const e = rd.entries[rd.entries.length - 1];
      log.stableTo(e.index, e.term);
      this.raft.onPersisted(e.index, e.term);
    }
    if (rd.snapshot) {
      log.stableSnapTo(rd.snapshot.metadata.index);
      if (rd.snapshot.metadata.index > log.applied) log.applied = rd.snapshot.metadata.index;
    }
  }

  /** The node's consensus state (progress only on the leader). */
  status(): RaftStatus {
    const r = this.raft;
    const st: RaftStatus = {
      id: r.id,
      hardState: r.hardState(),
      softState: r.softState(),
      applied: r.raftLog.applied,
      leadTransferee: r.leadTransferee,
      confState: r.prs.confState(),
    };
    if (r.state === StateRole.Leader) {
      st.progress = new Map();
      for (const [id, pr] of r.prs.progress) {
        st.progress.set(id, { match: pr.match, next: pr.next, state: pr.state, recentActive: pr.recentActive, isLearner: pr.isLearner });
      }
    }
    return st;
  }

  /** The transport could not reach `id`: the leader falls back to probing it. */
  reportUnreachable(id: NodeId): void {
    this.step0(newMessage({ type: MessageType.Unreachable, from: id }));
  }

  /** The transport finished sending a snapshot to `id` (ok false: it failed). */
  reportSnapshot(id: NodeId, ok: boolean): void {
    this.step0(newMessage({ type: MessageType.SnapStatus, from: id, reject: !ok }));
  }

  private step0(m: Message): void {
    this.raft.step(m);
  }
}
