// Membership (voters and learners), per-member progress, and the quorum arithmetic over them.

import { Progress } from './progress.js';
import type { ConfState, NodeId } from './types.js';

/** The outcome of counting votes (or acks). */
export enum VoteResult {
  Pending = 'Pending',
  Lost = 'Lost',
  Won = 'Won',
}

/** Voters, learners and their progress. */
export class ProgressTracker {
  readonly voters = new Set<NodeId>();
  readonly learners = new Set<NodeId>();
  readonly progress = new Map<NodeId, Progress>();
  readonly votes = new Map<NodeId, boolean>();
  private matchBuf: number[] = [];
  private idsCache: NodeId[] | undefined;

  constructor(readonly maxInflight: number) {}

  /** The membership as a ConfState (sorted, for stable output). */
  confState(): ConfState {
    const sort = (a: NodeId, b: NodeId) => (a < b ? -1 : a > b ? 1 : 0);
    return { voters: [...this.voters].sort(sort), learners: [...this.learners].sort(sort) };
  }

  /** Whether the only voter is one member (the leader can decide alone). */
  isSingleton(): boolean {
    return this.voters.size === 1;
  }

  quorum(): number {
    return (this.voters.size >> 1) + 1;
  }

  /** The highest index stored on a quorum of voters. */
  committed(): number {
    const n = this.voters.size;
    if (n === 0) return 0;
    const buf = this.matchBuf;
    let k = 0;
    // Insertion sort, descending: clusters are small and this runs on every acknowledgement.
    for (const id of this.voters) {
      const m = this.progress.get(id)?.match ?? 0;
      let j = k++;
      while (j > 0 && buf[j - 1] < m) {
        buf[j] = buf[j - 1];
        j--;
      }
      buf[j] = m;
    }
    return buf[this.quorum() - 1];
  }

  resetVotes(): void {
    this.votes.clear();
  }

  /** Records a vote (the first one from a member counts). */
  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  /** Counts the recorded votes among voters. */
  tallyVotes(): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0;
    let rejected = 0;
    for (const id of this.voters) {
      const v = this.votes.get(id);
      if (v === true) granted++;
      else if (v === false) rejected++;
    }
    const q = this.quorum();
    let result = VoteResult.Pending;
    if (granted >= q) result = VoteResult.Won;
    else if (this.voters.size - rejected < q) result = VoteResult.Lost;
    return { granted, rejected, result };
  }

  /** Whether the members in `acks` include a quorum of voters. */
  hasQuorum(acks: Set<NodeId>): boolean {
    let n = 0;
    for (const id of this.voters) if (acks.has(id)) n++;
    return n >= this.quorum();
  }

  /** Whether a quorum of voters was recently active (self counts as active). */
  quorumActive(self: NodeId): boolean {
    let n = 0;
    for (const id of this.voters) {
      if (id === self || this.progress.get(id)?.recentActive) n++;
    }
    return n >= this.quorum();
  }

  /** Members in ascending id order (deterministic iteration for message order). Do not modify. */
  ids(): NodeId[] {
    if (this.idsCache === undefined || this.idsCache.length !== this.progress.size) {
      this.idsCache = [...this.progress.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    return this.idsCache;
  }

  /** Must be called whenever members are added to or removed from `progress`. */
  membersChanged(): void {
    this.idsCache = undefined;
  }
}
