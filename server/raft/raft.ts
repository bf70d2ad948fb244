// The consensus state machine: one step function per role, driven by tick() and step(). Pure:
// time arrives as ticks, randomness from the injected source, and all effects leave as values
// (msgs, readStates, the log's unstable part) that RawNode hands out in a Ready.

import type { Logger } from '../log/logger.js';
import { nopLogger } from '../log/logger.js';
import { ProposalDroppedError, RaftError } from './errors.js';
import { RaftLog } from './log.js';
import { Progress, ProgressState } from './progress.js';
import { ReadOnly } from './readonly.js';
import type { RaftConfig } from './config.js';
import { ProgressTracker, VoteResult } from './tracker.js';
import type { ConfChange, ConfState, Entry, HardState, Message, NodeId, ReadState, Snapshot, SoftState } from './types.js';
import { ConfChangeType, EntryType, MessageType, NONE, StateRole } from './types.js';
import { bytesEqual, idHex, newMessage } from './util.js';

/** Context of the Vote messages of an election forced by leadership transfer (bypasses leases). */
export const CAMPAIGN_TRANSFER = new TextEncoder().encode('CampaignTransfer');

/** Why an election starts. */
export enum CampaignType {
  PreElection = 'PreElection',
  Election = 'Election',
  Transfer = 'Transfer',
}

/** The settings of the consensus core: the public RaftConfig of rawnode.ts. */
export type RaftOptions = RaftConfig;

const EMPTY = new Uint8Array(0);

/** One member's consensus state. */
export class Raft {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  readStates: ReadState[] = [];
  readonly raftLog: RaftLog;
  readonly maxMsgSize: number;
  readonly prs: ProgressTracker;
  state: StateRole = StateRole.Follower;
  isLearner = false;
  msgs: Message[] = [];
  lead: NodeId = NONE;
  leadTransferee: NodeId = NONE;
  /** Only one conf change may be pending: proposals of another before this index is applied are refused. */
  pendingConfIndex = 0;
  readOnly = new ReadOnly();
  private pendingReadIndexMessages: Message[] = [];
  electionElapsed = 0;
  private heartbeatElapsed = 0;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  private readonly heartbeatTimeout: number;
  readonly electionTimeout: number;
  private randomizedElectionTimeout = 0;
  readonly disableProposalForwarding: boolean;
  private readonly random: () => number;
  readonly logger: Logger;

  constructor(o: RaftOptions) {
    if (o.id === NONE) throw new RaftError('InvalidConfig', 'cannot use none as id');
    if (o.heartbeatTick <= 0) throw new RaftError('InvalidConfig', 'heartbeat tick must be greater than 0');
    if (o.electionTick <= o.heartbeatTick) throw new RaftError('InvalidConfig', 'election tick must be greater than heartbeat tick');
    const maxInflight = o.maxInflightMsgs ?? 256;
    if (maxInflight <= 0) throw new RaftError('InvalidConfig', 'max inflight messages must be greater than 0');
    this.id = o.id;
    this.logger = (o.logger ?? nopLogger).child({ raft: idHex(o.id) });
    this.raftLog = new RaftLog(o.storage, o.maxCommittedSizePerReady ?? Infinity);
    this.maxMsgSize = o.maxSizePerMsg ?? 1024 * 1024;
    this.prs = new ProgressTracker(maxInflight);
    this.electionTimeout = o.electionTick;
    this.heartbeatTimeout = o.heartbeatTick;
    this.checkQuorum = o.checkQuorum;
    this.preVote = o.preVote;
    this.disableProposalForwarding = o.disableProposalForwarding ?? false;
    this.random = o.random;

    const { hardState, confState } = o.storage.initialState();
    this.restoreConfig(confState);
    if (hardState.term !== 0 || hardState.vote !== NONE || hardState.commit !== 0) this.loadState(hardState);
    if (o.applied !== undefined && o.applied > 0) this.raftLog.appliedTo(o.applied);
    this.becomeFollower(this.term, NONE);
    this.logger.info('newRaft', {
      peers: this.prs.confState().voters.map(idHex),
      term: this.term,
      commit: this.raftLog.committed,
      applied: this.raftLog.applied,
      lastindex: this.raftLog.lastIndex(),
      lastterm: this.raftLog.lastTerm(),
    });
  }

  softState(): SoftState {
    return { lead: this.lead, role: this.state };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  private loadState(hs: HardState): void {
    if (hs.commit < this.raftLog.committed || hs.commit > this.raftLog.lastIndex()) {
      throw new RaftError('Internal', `hs.commit ${hs.commit} is out of range [${this.raftLog.committed}, ${this.raftLog.lastIndex()}]`);
    }
    this.raftLog.committed = hs.commit;
    this.term = hs.term;
    this.vote = hs.vote;
  }

  // ---- sending ----

  private send(m: Message): void {
    // Forwarded messages keep their origin (a forwarded TransferLeader names the transferee in `from`).
    if (m.from === NONE) m.from = this.id;
    const t = m.type;
    if (t === MessageType.Vote || t === MessageType.VoteResp || t === MessageType.PreVote || t === MessageType.PreVoteResp) {
      // Campaign messages carry the term they are about, which may differ from ours.
      if (m.term === 0) throw new RaftError('Internal', `term should be set when sending ${t}`);
    } else {
      if (m.term !== 0) throw new RaftError('Internal', `term should not be set when sending ${t} (was ${m.term})`);
      // Proposals and read requests forwarded to the leader stay termless, like local messages.
      if (t !== MessageType.Prop && t !== MessageType.ReadIndex) m.term = this.term;
    }
    this.msgs.push(m);
  }

  /** Sends an append (or a snapshot) to `to` if its progress allows. */
  sendAppend(to: NodeId): void {
    this.maybeSendAppend(to, true);
  }

  private maybeSendAppend(to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.prs.progress.get(to);
    if (!pr || pr.isPaused()) return false;
    let term = 0;
    let ents: Entry[] | undefined;
    let needSnap = false;
    try {
      term = this.raftLog.term(pr.next - 1);
      ents = this.raftLog.entries(pr.next, this.maxMsgSize);
    } catch (e) {
      if (!(e instanceof RaftError) || (e.code !== 'Compacted' && e.code !== 'Unavailable')) throw e;
      needSnap = true;
    }
    if (!needSnap && pr.next - 1 < this.raftLog.firstIndex() - 1) needSnap = true;
    if (!needSnap && ents!.length === 0 && !sendIfEmpty) return false;
    if (needSnap) {
      if (!pr.recentActive) {
        this.logger.debug('ignore sending snapshot as it is not recently active', { to: idHex(to) });
        return false;
      }
      let snapshot: Snapshot;
      try {
        snapshot = this.raftLog.snapshot();
      } catch (e) {
        if (e instanceof RaftError && e.code === 'SnapshotTemporarilyUnavailable') {
          this.logger.debug('failed to send snapshot because snapshot is temporarily unavailable', { to: idHex(to) });
          return false;
        }
        throw e;
      }
      if (snapshot.metadata.index === 0) throw new RaftError('Internal', 'need non-empty snapshot');
      this.logger.debug('sending snapshot', {
        to: idHex(to),
        index: snapshot.metadata.index,
        term: snapshot.metadata.term,
        firstindex: this.raftLog.firstIndex(),
        committed: this.raftLog.committed,
      });
      pr.becomeSnapshot(snapshot.metadata.index);
      this.send(newMessage({ type: MessageType.Snap, to, snapshot }));
      return true;
    }
    const m = newMessage({
      type: MessageType.App,
      to,
      index: pr.next - 1,
      logTerm: term,
      entries: ents!,
      commit: this.raftLog.committed,
    });
    if (ents!.length > 0) {
      if (pr.state === ProgressState.Replicate) {
        const last = ents![ents!.length - 1].index;
        pr.optimisticUpdate(last);
        pr.inflights.add(last);
      } else if (pr.state === ProgressState.Probe) {
        pr.probeSent = true;
      }
    }
    this.send(m);
    return true;
  }

  private sendHeartbeat(to: NodeId, ctx: Uint8Array): void {
    // Never advance a follower's commit past what it is known to have.
    const commit = Math.min(this.prs.progress.get(to)?.match ?? 0, this.raftLog.committed);
    this.send(newMessage({ type: MessageType.Heartbeat, to, commit, context: ctx }));
  }

  /** Appends (where allowed) to every other member. */
  bcastAppend(): void {
    for (const id of this.prs.ids()) if (id !== this.id) this.sendAppend(id);
  }

  private bcastHeartbeat(): void {
    this.bcastHeartbeatWithCtx(this.readOnly.lastPendingRequestCtx());
  }

  private bcastHeartbeatWithCtx(ctx: Uint8Array): void {
    for (const id of this.prs.ids()) if (id !== this.id) this.sendHeartbeat(id, ctx);
  }

  // ---- commit and log ----

  private maybeCommit(): boolean {
    return this.raftLog.maybeCommit(this.prs.committed(), this.term);
  }

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.prs.resetVotes();
    const last = this.raftLog.lastIndex();
    for (const [id, old] of this.prs.progress) {
      const pr = new Progress(0, last + 1, this.prs.maxInflight, old.isLearner);
      // Our own copy counts only once it is durable (see onPersisted).
      if (id === this.id) pr.match = this.raftLog.lastStableIndex();
      this.prs.progress.set(id, pr);
    }
    this.pendingConfIndex = 0;
    this.readOnly = new ReadOnly();
    this.pendingReadIndexMessages = [];
  }

  private appendEntry(es: Entry[]): void {
    let li = this.raftLog.lastIndex();
    // Fresh objects: the proposed ones may be shared (a duplicated forwarded proposal).
    const ents: Entry[] = new Array(es.length);
    for (let i = 0; i < es.length; i++) ents[i] = { term: this.term, index: ++li, type: es[i].type, data: es[i].data };
    this.raftLog.append(ents);
    // The leader's own acknowledgement waits until the caller has persisted the entries (onPersisted):
    // the caller may send these to followers before its own disk write completes.
  }

  /** The caller made entries up to (index, term) durable: the leader now counts its own copy. */
  onPersisted(index: number, term: number): void {
    if (this.state !== StateRole.Leader || !this.raftLog.matchTerm(index, term)) return;
    const pr = this.prs.progress.get(this.id);
    if (pr && pr.maybeUpdate(index) && this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastAppend();
    }
  }

  // ---- ticks ----

  /** Advances the logical clock by one tick. */
  tick(): void {
    if (this.state === StateRole.Leader) this.tickHeartbeat();
    else this.tickElection();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.pastElectionTimeout()) {
      this.electionElapsed = 0;
      this.step(newMessage({ type: MessageType.Hup, from: this.id }));
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step(newMessage({ type: MessageType.CheckQuorum, from: this.id }));
      // A transfer that did not finish within an election timeout is abandoned.
      if (this.state === StateRole.Leader && this.leadTransferee !== NONE) {
        this.logger.info('leadership transfer aborted after an election timeout', { transferee: idHex(this.leadTransferee) });
        this.abortLeaderTransfer();
      }
    }
    if (this.state !== StateRole.Leader) return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.step(newMessage({ type: MessageType.Beat, from: this.id }));
    }
  }

  private pastElectionTimeout(): boolean {
    return this.electionElapsed >= this.randomizedElectionTimeout;
  }

  private resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTimeout + Math.floor(this.random() * this.electionTimeout);
  }

  // ---- role changes ----

  becomeFollower(term: number, lead: NodeId): void {
    this.reset(term);
    this.lead = lead;
    this.state = StateRole.Follower;
    this.logger.info(`${idHex(this.id)} became follower at term ${this.term}`, { term: this.term });
  }

  private becomeCandidate(): void {
    if (this.state === StateRole.Leader) throw new RaftError('Internal', 'invalid transition [leader -> candidate]');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.state = StateRole.Candidate;
    this.logger.info(`${idHex(this.id)} became candidate at term ${this.term}`, { term: this.term });
  }

  private becomePreCandidate(): void {
    if (this.state === StateRole.Leader) throw new RaftError('Internal', 'invalid transition [leader -> pre-candidate]');
    // Pre-candidacy changes neither the term nor the vote.
    this.prs.resetVotes();
    this.lead = NONE;
    this.state = StateRole.PreCandidate;
    this.logger.info(`${idHex(this.id)} became pre-candidate at term ${this.term}`, { term: this.term });
  }

  private becomeLeader(): void {
    if (this.state === StateRole.Follower) throw new RaftError('Internal', 'invalid transition [follower -> leader]');
    this.reset(this.term);
    this.lead = this.id;
    this.state = StateRole.Leader;
    const self = this.prs.progress.get(this.id);
    if (self) {
      self.becomeReplicate();
      self.recentActive = true;
    }
    // Conservatively treat any uncommitted entry as a possible conf change.
    this.pendingConfIndex = this.raftLog.lastIndex();
    this.appendEntry([{ term: 0, index: 0, type: EntryType.Normal, data: EMPTY }]);
    this.logger.info(`${idHex(this.id)} became leader at term ${this.term}`, { term: this.term });
  }

  private promotable(): boolean {
    const pr = this.prs.progress.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.raftLog.hasPendingSnapshot();
  }

  private hasUnappliedConfChanges(): boolean {
    if (this.raftLog.applied >= this.raftLog.committed) return false;
    const lo = Math.max(this.raftLog.applied + 1, this.raftLog.firstIndex());
    if (lo > this.raftLog.committed) return false;
    for (const e of this.raftLog.slice(lo, this.raftLog.committed + 1)) if (e.type === EntryType.ConfChange) return true;
    return false;
  }

  private hup(t: CampaignType): void {
    if (this.state === StateRole.Leader) {
      this.logger.debug('ignoring Hup because already leader');
      return;
    }
    if (!this.promotable()) {
      this.logger.warn(`${idHex(this.id)} is unpromotable and can not campaign`);
      return;
    }
    if (this.hasUnappliedConfChanges()) {
      this.logger.warn(`${idHex(this.id)} cannot campaign at term ${this.term} since there are still pending configuration changes to apply`);
      return;
    }
    this.logger.info(`${idHex(this.id)} is starting a new election at term ${this.term}`);
    this.campaign(t === CampaignType.Election && this.preVote ? CampaignType.PreElection : t);
  }

  private campaign(t: CampaignType): void {
    let term: number;
    let voteMsg: MessageType;
    if (t === CampaignType.PreElection) {
      this.becomePreCandidate();
      voteMsg = MessageType.PreVote;
      // Pre-vote asks about the next term without moving to it.
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteMsg = MessageType.Vote;
      term = this.term;
    }
    const respType = voteMsg === MessageType.PreVote ? MessageType.PreVoteResp : MessageType.VoteResp;
    if (this.poll(this.id, respType, true) === VoteResult.Won) {
      // Won alone (single voter): go straight on.
      if (t === CampaignType.PreElection) this.campaign(CampaignType.Election);
      else this.becomeLeader();
      return;
    }
    const voters = [...this.prs.voters].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const id of voters) {
      if (id === this.id) continue;
      this.logger.info(`${idHex(this.id)} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}] sent ${voteMsg} request to ${idHex(id)} at term ${this.term}`);
      this.send(
        newMessage({
          type: voteMsg,
          to: id,
          term,
          index: this.raftLog.lastIndex(),
          logTerm: this.raftLog.lastTerm(),
          context: t === CampaignType.Transfer ? CAMPAIGN_TRANSFER : EMPTY,
        }),
      );
    }
  }

  private poll(id: NodeId, t: MessageType, granted: boolean): VoteResult {
    this.logger.debug(`${idHex(this.id)} received ${t} ${granted ? '' : 'rejection '}from ${idHex(id)} at term ${this.term}`);
    this.prs.recordVote(id, granted);
    return this.prs.tallyVotes().result;
  }

  // ---- step ----

  /** Feeds one message (local or from a peer); throws ProposalDroppedError when a proposal is refused. */
  step(m: Message): void {
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === MessageType.Vote || m.type === MessageType.PreVote) {
        const force = bytesEqual(m.context, CAMPAIGN_TRANSFER);
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTimeout;
        if (!force && inLease) {
          // We heard from a leader within the minimum election timeout: a disruptive candidate is ignored.
          this.logger.info(
            `${idHex(this.id)} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}, vote: ${idHex(this.vote)}] ignored ${m.type} from ${idHex(m.from)} [logterm: ${m.logTerm}, index: ${m.index}] at term ${this.term}: lease is not expired (remaining ticks: ${this.electionTimeout - this.electionElapsed})`,
          );
          return;
        }
      }
      if (m.type === MessageType.PreVote) {
        // Never change our term in response to a pre-vote.
      } else if (m.type === MessageType.PreVoteResp && !m.reject) {
        // A granted pre-vote carries the future term; we move to it when the real election starts.
      } else {
        this.logger.info(`${idHex(this.id)} [term: ${this.term}] received a ${m.type} message with higher term from ${idHex(m.from)} [term: ${m.term}]`);
        if (m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap) {
          this.becomeFollower(m.term, m.from);
        } else {
          this.becomeFollower(m.term, NONE);
        }
      }
    } else if (m.term < this.term) {
      if ((this.checkQuorum || this.preVote) && (m.type === MessageType.Heartbeat || m.type === MessageType.App)) {
        // A stale leader (e.g. after a partition) learns of the newer term from this and steps down;
        // without it, it could keep a pre-voting or leased cluster from ever electing.
        this.send(newMessage({ type: MessageType.AppResp, to: m.from }));
      } else if (m.type === MessageType.PreVote || m.type === MessageType.Vote) {
        // Tell the stale candidate our term (as the Raft paper's RequestVote reply does). Without
        // this, a candidate that we never contact ourselves (e.g. a voter we still think is a
        // learner during a membership change) could stay behind our term forever.
        this.logger.info(`${idHex(this.id)} rejected ${m.type} from ${idHex(m.from)} at term ${this.term} (lower term)`);
        const respType = m.type === MessageType.Vote ? MessageType.VoteResp : MessageType.PreVoteResp;
        this.send(newMessage({ type: respType, to: m.from, term: this.term, reject: true }));
      } else {
        this.logger.debug(`${idHex(this.id)} ignored a ${m.type} message with lower term from ${idHex(m.from)} [term: ${m.term}]`);
      }
      return;
    }

    switch (m.type) {
      case MessageType.Hup:
        this.hup(CampaignType.Election);
        return;
      case MessageType.Vote:
      case MessageType.PreVote: {
        const canVote =
          this.vote === m.from ||
          (this.vote === NONE && this.lead === NONE) ||
          (m.type === MessageType.PreVote && m.term > this.term);
        const respType = m.type === MessageType.Vote ? MessageType.VoteResp : MessageType.PreVoteResp;
        if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
          this.logger.info(`${idHex(this.id)} cast ${m.type} for ${idHex(m.from)} at term ${this.term}`);
          // The response carries the request's term so a pre-candidate can count it.
          this.send(newMessage({ type: respType, to: m.from, term: m.term }));
          if (m.type === MessageType.Vote) {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else {
          this.logger.info(`${idHex(this.id)} rejected ${m.type} from ${idHex(m.from)} at term ${this.term}`);
          this.send(newMessage({ type: respType, to: m.from, term: this.term, reject: true }));
          if (m.type === MessageType.Vote && this.state === StateRole.Candidate && this.raftLog.isUpToDate(m.index, m.logTerm)) {
            // A rival candidate of our term has a log at least as good as ours: back off for an extra
            // election timeout so that it times out first next round and we can vote for it. Liveness
            // only; without it, two candidates can keep splitting the vote, round after round, when
            // one of them cannot win at all (e.g. it lags behind a membership change) and has no
            // pre-vote to keep it from bumping the term.
            this.electionElapsed = 0;
            this.resetRandomizedElectionTimeout();
            this.randomizedElectionTimeout += this.electionTimeout;
          }
        }
        return;
      }
      default:
        if (this.state === StateRole.Leader) this.stepLeader(m);
        else if (this.state === StateRole.Follower) this.stepFollower(m);
        else this.stepCandidate(m);
    }
  }

  private stepLeader(m: Message): void {
    switch (m.type) {
      case MessageType.Beat:
        this.bcastHeartbeat();
        return;
      case MessageType.CheckQuorum:
        if (!this.prs.quorumActive(this.id)) {
          this.logger.warn(`${idHex(this.id)} stepped down to follower since quorum is not active`);
          this.becomeFollower(this.term, NONE);
        }
        for (const [id, pr] of this.prs.progress) if (id !== this.id) pr.recentActive = false;
        return;
      case MessageType.Prop: {
        if (m.entries.length === 0) throw new RaftError('Internal', `${idHex(this.id)} stepped empty MsgProp`);
        if (!this.prs.progress.has(this.id)) {
          // Removed from the configuration while still leader: refuse new work.
          throw new ProposalDroppedError('raft proposal dropped: leader was removed from the configuration');
        }
        if (this.leadTransferee !== NONE) {
          this.logger.debug(`${idHex(this.id)} [term ${this.term}] transfer leadership to ${idHex(this.leadTransferee)} is in progress; dropping proposal`);
          throw new ProposalDroppedError('raft proposal dropped: leadership transfer in progress');
        }
        let ents = m.entries;
        for (let i = 0; i < ents.length; i++) {
          if (ents[i].type !== EntryType.ConfChange) continue;
          if (this.pendingConfIndex > this.raftLog.applied) {
            this.logger.info('ignoring conf change: a previous one is not applied yet', {
              pendingConfIndex: this.pendingConfIndex,
              applied: this.raftLog.applied,
            });
            if (ents === m.entries) ents = ents.slice();
            ents[i] = { term: 0, index: 0, type: EntryType.Normal, data: EMPTY };
          } else {
            this.pendingConfIndex = this.raftLog.lastIndex() + i + 1;
          }
        }
        this.appendEntry(ents);
        this.bcastAppend();
        return;
      }
      case MessageType.ReadIndex:
        // Until an entry of this term commits, our commit index may be behind the previous leader's
        // (even as the only voter left: a removed leader may have committed more than we know).
        if (!this.committedEntryInCurrentTerm()) {
          this.pendingReadIndexMessages.push(m);
          return;
        }
        this.sendReadIndexHeartbeat(m);
        return;
      case MessageType.TransferLeader:
        this.handleTransferLeader(m.from);
        return;
      default:
        break;
    }

    const pr = this.prs.progress.get(m.from);
    if (!pr) {
      this.logger.debug(`${idHex(this.id)} no progress available for ${idHex(m.from)}`);
      return;
    }
    switch (m.type) {
      case MessageType.AppResp:
        pr.recentActive = true;
        if (m.reject) {
          this.logger.debug(`${idHex(this.id)} received AppResp(rejected, hint: (index ${m.rejectHint}, term ${m.logTerm})) from ${idHex(m.from)} for index ${m.index}`);
          let nextProbeIdx = m.rejectHint;
          if (m.logTerm > 0) nextProbeIdx = this.raftLog.findConflictByTerm(m.rejectHint, m.logTerm);
          if (pr.maybeDecrTo(m.index, nextProbeIdx)) {
            if (pr.state === ProgressState.Replicate) pr.becomeProbe();
            this.sendAppend(m.from);
          }
        } else {
          const oldPaused = pr.isPaused();
          if (pr.maybeUpdate(m.index)) {
            if (pr.state === ProgressState.Probe) pr.becomeReplicate();
            else if (pr.state === ProgressState.Snapshot && pr.match >= pr.pendingSnapshot) {
              pr.becomeProbe();
              pr.becomeReplicate();
            } else if (pr.state === ProgressState.Replicate) pr.inflights.freeLE(m.index);

            if (this.maybeCommit()) {
              this.releasePendingReadIndexMessages();
              this.bcastAppend();
            } else if (oldPaused) {
              this.sendAppend(m.from);
            }
            // Fill the window while there is more to send.
            while (this.maybeSendAppend(m.from, false)) {
              /* keep sending */
            }
            if (m.from === this.leadTransferee && pr.match === this.raftLog.lastIndex()) {
              this.logger.info(`${idHex(this.id)} sent TimeoutNow to ${idHex(m.from)} after it caught up`);
              this.sendTimeoutNow(m.from);
            }
          }
        }
        return;
      case MessageType.HeartbeatResp: {
        pr.recentActive = true;
        pr.probeSent = false;
        if (pr.state === ProgressState.Replicate && pr.inflights.full()) pr.inflights.freeFirstOne();
        if (pr.match < this.raftLog.lastIndex()) this.sendAppend(m.from);
        if (m.context.length === 0) return;
        const acks = this.readOnly.recvAck(m.from, m.context);
        if (!acks || !this.prs.hasQuorum(acks)) return;
        for (const rs of this.readOnly.advance(m.context)) this.respondToReadIndex(rs.req, rs.index);
        return;
      }
      case MessageType.SnapStatus:
        if (pr.state !== ProgressState.Snapshot) return;
        if (!m.reject) {
          pr.becomeProbe();
          this.logger.debug(`${idHex(this.id)} snapshot succeeded, resumed sending replication messages to ${idHex(m.from)}`);
        } else {
          pr.pendingSnapshot = 0;
          pr.becomeProbe();
          this.logger.debug(`${idHex(this.id)} snapshot failed, resumed sending replication messages to ${idHex(m.from)}`);
        }
        // Wait for the follower's answer (or the next heartbeat) before probing.
        pr.probeSent = true;
        return;
      case MessageType.Unreachable:
        if (pr.state === ProgressState.Replicate) pr.becomeProbe();
        this.logger.debug(`${idHex(this.id)} failed to send message to ${idHex(m.from)} because it is unreachable`);
        return;
      default:
        return;
    }
  }

  private handleTransferLeader(transferee: NodeId): void {
    if (!this.prs.voters.has(transferee)) {
      this.logger.info(`${idHex(this.id)} ignored transferring leadership to ${idHex(transferee)}: not a voting member`);
      return;
    }
    const last = this.leadTransferee;
    if (last !== NONE) {
      if (last === transferee) {
        this.logger.info(`${idHex(this.id)} [term ${this.term}] transfer leadership to ${idHex(transferee)} is in progress, ignores request to same node`);
        return;
      }
      this.abortLeaderTransfer();
      this.logger.info(`${idHex(this.id)} [term ${this.term}] abort previous transferring leadership to ${idHex(last)}`);
    }
    if (transferee === this.id) {
      this.logger.info(`${idHex(this.id)} is already leader. Ignored transferring leadership to self`);
      return;
    }
    this.logger.info(`${idHex(this.id)} [term ${this.term}] starts to transfer leadership to ${idHex(transferee)}`);
    // The transfer must finish within one election timeout.
    this.electionElapsed = 0;
    this.leadTransferee = transferee;
    const pr = this.prs.progress.get(transferee)!;
    if (pr.match === this.raftLog.lastIndex()) {
      this.sendTimeoutNow(transferee);
      this.logger.info(`${idHex(this.id)} sends TimeoutNow to ${idHex(transferee)} immediately as it already has up-to-date log`);
    } else {
      this.sendAppend(transferee);
    }
  }

  /** True, having logged that it drops `what`, when a follower knows no leader to forward `what` to. */
  private droppedWithoutLeader(what: string): boolean {
    if (this.lead !== NONE) return false;
    this.logger.info(`${idHex(this.id)} no leader at term ${this.term}; dropping ${what}`);
    return true;
  }

  /** An App, Heartbeat or Snap of the leader's, once the caller has taken the sender as leader. */
  private handleFromLeader(m: Message): void {
    if (m.type === MessageType.App) this.handleAppendEntries(m);
    else if (m.type === MessageType.Heartbeat) this.handleHeartbeat(m);
    else this.handleSnapshot(m);
  }

  private stepCandidate(m: Message): void {
    const myVoteResp = this.state === StateRole.PreCandidate ? MessageType.PreVoteResp : MessageType.VoteResp;
    switch (m.type) {
      case MessageType.Prop:
        this.logger.info(`${idHex(this.id)} no leader at term ${this.term}; dropping proposal`);
        throw new ProposalDroppedError('raft proposal dropped: no leader');
      case MessageType.App:
      case MessageType.Heartbeat:
      case MessageType.Snap:
        this.becomeFollower(m.term, m.from);
        this.handleFromLeader(m);
        return;
      case MessageType.PreVoteResp:
      case MessageType.VoteResp: {
        if (m.type !== myVoteResp) return;
        const res = this.poll(m.from, m.type, !m.reject);
        if (res === VoteResult.Won) {
          if (this.state === StateRole.PreCandidate) this.campaign(CampaignType.Election);
          else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (res === VoteResult.Lost) {
          // A pre-candidate that lost keeps its term; a candidate already moved to it.
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      case MessageType.TimeoutNow:
        this.logger.debug(`${idHex(this.id)} [term ${this.term} state ${this.state}] ignored TimeoutNow from ${idHex(m.from)}`);
        return;
      case MessageType.ReadIndex:
        this.logger.info(`${idHex(this.id)} no leader at term ${this.term}; dropping index reading msg`);
        return;
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MessageType.Prop:
        if (this.droppedWithoutLeader('proposal')) throw new ProposalDroppedError('raft proposal dropped: no leader');
        if (this.disableProposalForwarding) {
          this.logger.info(`${idHex(this.id)} not forwarding to leader ${idHex(this.lead)} at term ${this.term}; dropping proposal`);
          throw new ProposalDroppedError('raft proposal dropped: proposal forwarding disabled');
        }
        m.to = this.lead;
        this.send(m);
        return;
      case MessageType.App:
      case MessageType.Heartbeat:
      case MessageType.Snap:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleFromLeader(m);
        return;
      case MessageType.TransferLeader:
        if (this.droppedWithoutLeader('leader transfer msg')) return;
        m.to = this.lead;
        m.term = 0;
        this.send(m);
        return;
      case MessageType.TimeoutNow:
        this.logger.info(`${idHex(this.id)} [term ${this.term}] received TimeoutNow from ${idHex(m.from)} and starts an election to get leadership`);
        // Leadership transfer never uses pre-vote: the old leader asked for it.
        this.hup(CampaignType.Transfer);
        return;
      case MessageType.ReadIndex:
        if (this.droppedWithoutLeader('index reading msg')) return;
        m.to = this.lead;
        this.send(m);
        return;
      case MessageType.ReadIndexResp:
        this.readStates.push({ index: m.index, requestCtx: m.context });
        return;
      default:
        return;
    }
  }

  private handleAppendEntries(m: Message): void {
    if (m.index < this.raftLog.committed) {
      this.send(newMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.committed }));
      return;
    }
    const lastNew = this.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNew >= 0) {
      this.send(newMessage({ type: MessageType.AppResp, to: m.from, index: lastNew }));
      return;
    }
    // Reject with a hint: the last index whose term is <= the leader's term at m.index, so the
    // leader can skip a whole divergent term per round trip instead of one entry.
    let hintIndex = Math.min(m.index, this.raftLog.lastIndex());
    hintIndex = this.raftLog.findConflictByTerm(hintIndex, m.logTerm);
    const hintTerm = this.raftLog.zeroTermOnErr(hintIndex);
    this.logger.debug(`${idHex(this.id)} [logterm: ${this.raftLog.zeroTermOnErr(m.index)}, index: ${m.index}] rejected App [logterm: ${m.logTerm}, index: ${m.index}] from ${idHex(m.from)}`);
    this.send(newMessage({ type: MessageType.AppResp, to: m.from, index: m.index, reject: true, rejectHint: hintIndex, logTerm: hintTerm }));
  }

  private handleHeartbeat(m: Message): void {
    this.raftLog.commitTo(m.commit);
    this.send(newMessage({ type: MessageType.HeartbeatResp, to: m.from, context: m.context }));
  }

  private handleSnapshot(m: Message): void {
    const s = m.snapshot;
    if (!s) return;
    if (this.restore(s)) {
      this.logger.info(`${idHex(this.id)} [commit: ${this.raftLog.committed}] restored snapshot [index: ${s.metadata.index}, term: ${s.metadata.term}]`);
      this.send(newMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.lastIndex() }));
    } else {
      this.logger.info(`${idHex(this.id)} [commit: ${this.raftLog.committed}] ignored snapshot [index: ${s.metadata.index}, term: ${s.metadata.term}]`);
      this.send(newMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.committed }));
    }
  }

  /** Installs a snapshot from the leader unless the log already covers it; returns whether it did. */
  private restore(s: Snapshot): boolean {
    if (s.metadata.index <= this.raftLog.committed) return false;
    if (this.state !== StateRole.Follower) {
      // Only a follower of the current leader gets snapshots; anything else is a bug. Step down to be safe.
      this.logger.warn(`${idHex(this.id)} attempted to restore snapshot as ${this.state}; should never happen`);
      this.becomeFollower(this.term + 1, NONE);
      return false;
    }
    const cs = s.metadata.confState;
    if (!cs.voters.includes(this.id) && !cs.learners.includes(this.id)) {
      // A member added after the snapshot was taken: its AddNode entry follows in the log. It cannot
      // campaign until it appears in the configuration, so taking the snapshot is safe.
      this.logger.info(`${idHex(this.id)} restoring a snapshot whose configuration does not include it yet`);
    }
    if (this.raftLog.matchTerm(s.metadata.index, s.metadata.term)) {
      // Our log already has the snapshot's last entry: just fast-forward the commit.
      this.raftLog.commitTo(s.metadata.index);
      return false;
    }
    this.raftLog.restore(s);
    this.prs.progress.clear();
    this.restoreConfig(cs);
    return true;
  }

  private restoreConfig(cs: ConfState): void {
    this.prs.voters.clear();
    this.prs.learners.clear();
    this.prs.progress.clear();
    const next = this.raftLog.lastIndex() + 1;
    for (const id of cs.voters) {
      this.prs.voters.add(id);
      this.prs.progress.set(id, new Progress(0, next, this.prs.maxInflight, false));
    }
    for (const id of cs.learners) {
      this.prs.learners.add(id);
      this.prs.progress.set(id, new Progress(0, next, this.prs.maxInflight, true));
    }
    const self = this.prs.progress.get(this.id);
    if (self) self.match = next - 1;
    this.isLearner = this.prs.learners.has(this.id);
    this.prs.membersChanged();
  }

  private committedEntryInCurrentTerm(): boolean {
    return this.raftLog.zeroTermOnErr(this.raftLog.committed) === this.term;
  }

  private releasePendingReadIndexMessages(): void {
    if (this.pendingReadIndexMessages.length === 0 || !this.committedEntryInCurrentTerm()) return;
    const msgs = this.pendingReadIndexMessages;
    this.pendingReadIndexMessages = [];
    for (const m of msgs) this.sendReadIndexHeartbeat(m);
  }

  private sendReadIndexHeartbeat(m: Message): void {
    if (this.prs.isSingleton()) {
      // The only voter needs no one to confirm its leadership.
      this.respondToReadIndex(m, this.raftLog.committed);
      return;
    }
    this.readOnly.addRequest(this.raftLog.committed, m);
    // The leader acknowledges its own heartbeat.
    this.readOnly.recvAck(this.id, m.context);
    this.bcastHeartbeatWithCtx(m.context);
  }

  private respondToReadIndex(req: Message, index: number): void {
    if (req.from === NONE || req.from === this.id) {
      this.readStates.push({ index, requestCtx: req.context });
      return;
    }
    this.send(newMessage({ type: MessageType.ReadIndexResp, to: req.from, index, context: req.context }));
  }

  private sendTimeoutNow(to: NodeId): void {
    this.send(newMessage({ type: MessageType.TimeoutNow, to }));
  }

  abortLeaderTransfer(): void {
    this.leadTransferee = NONE;
  }

  // ---- membership ----

  /** Applies a committed single-member change; returns the new membership. */
  applyConfChange(cc: ConfChange): ConfState {
    const last = this.raftLog.lastIndex();
    // Adds `id` as a voter or a learner; a member of the other kind is promoted or demoted.
    const addAs = (id: NodeId, learner: boolean) => {
      const [to, from] = learner ? [this.prs.learners, this.prs.voters] : [this.prs.voters, this.prs.learners];
      if (from.has(id)) {
        // A move keeps the progress: the member's log is already being replicated.
        from.delete(id);
        to.add(id);
        this.prs.progress.get(id)!.isLearner = learner;
      } else if (!to.has(id)) {
        to.add(id);
        const pr = new Progress(0, last + 1, this.prs.maxInflight, learner);
        // A new member counts as active so that check-quorum does not step the leader down at once
        // and so that it can be sent a snapshot right away.
        pr.recentActive = true;
        this.prs.progress.set(id, pr);
      }
    };
    switch (cc.type) {
      case ConfChangeType.AddNode:
        addAs(cc.nodeId, false);
        break;
      case ConfChangeType.AddLearnerNode:
        addAs(cc.nodeId, true);
        break;
      case ConfChangeType.RemoveNode:
        this.prs.voters.delete(cc.nodeId);
        this.prs.learners.delete(cc.nodeId);
        this.prs.progress.delete(cc.nodeId);
        break;
      case ConfChangeType.UpdateNode:
        break;
      default:
        throw new RaftError('Internal', `unexpected conf change type ${String(cc.type)}`);
    }
    this.prs.membersChanged();
    this.isLearner = this.prs.learners.has(this.id);
    const cs = this.prs.confState();
    this.logger.info(`${idHex(this.id)} switched to configuration`, { voters: cs.voters.map(idHex), learners: cs.learners.map(idHex) });

    if (this.state !== StateRole.Leader) return cs;
    if (!this.prs.voters.has(this.id)) {
      // The leader was removed (or demoted): hand leadership to the most up-to-date voter at once
      // instead of leaving the cluster to wait out an election timeout.
      let best: NodeId = NONE;
      let bestMatch = -1;
      for (const id of this.prs.voters) {
        const m = this.prs.progress.get(id)!.match;
        if (m > bestMatch) {
          best = id;
          bestMatch = m;
        }
      }
      this.logger.info(`${idHex(this.id)} removed from the configuration; stepping down`, { successor: idHex(best) });
      this.becomeFollower(this.term, NONE);
      if (best !== NONE) this.sendTimeoutNow(best);
      return cs;
    }
    if (this.leadTransferee !== NONE && !this.prs.voters.has(this.leadTransferee)) this.abortLeaderTransfer();
    // The quorum may have changed: maybe more is committed now; new members need appends.
    if (this.maybeCommit()) this.bcastAppend();
    else for (const id of this.prs.ids()) if (id !== this.id) this.maybeSendAppend(id, false);
    return cs;
  }
}
