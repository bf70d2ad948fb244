// What a leader knows about one follower's log, and how it sends to it: Probe (one append per
// heartbeat until the match point is found), Replicate (pipelined appends within the inflight
// window), Snapshot (waiting for a snapshot to be installed).

import { Inflights } from './inflights.js';

/** How the leader is currently sending to a follower. */
export enum ProgressState {
  Probe = 'Probe',
  Replicate = 'Replicate',
  Snapshot = 'Snapshot',
}

/** The leader's record of one follower. */
export class Progress {
  state = ProgressState.Probe;
  /** Index of the snapshot being sent, while in Snapshot state. */
  pendingSnapshot = 0;
  /** Heard from within the last election timeout (for check-quorum). */
  recentActive = false;
  /** In Probe: an append is outstanding, wait for its answer or a heartbeat. */
  probeSent = false;
  readonly inflights: Inflights;

  constructor(
    public match: number,
    public next: number,
    maxInflight: number,
    public isLearner: boolean,
  ) {
    this.inflights = new Inflights(maxInflight);
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === ProgressState.Snapshot) {
      const pending = this.pendingSnapshot;
      this.resetState(ProgressState.Probe);
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState(ProgressState.Probe);
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState(ProgressState.Replicate);
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState(ProgressState.Snapshot);
    this.pendingSnapshot = snapshotIndex;
  }

  /** The follower acknowledged up to n; returns whether match moved. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /** Pipelining: assume the append up to n will succeed. */
  optimisticUpdate(n: number): void {
    this.next = n + 1;
  }

  /** The follower rejected an append at `rejected`; move next back. Returns false for stale rejections. */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === ProgressState.Replicate) {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), 1);
    this.probeSent = false;
    return true;
  }

  /** Whether the leader must hold back appends to this follower. */
  isPaused(): boolean {
    switch (this.state) {
      case ProgressState.Probe:
        return this.probeSent;
      case ProgressState.Replicate:
        return this.inflights.full();
      default:
        return true;
    }
  }
}
