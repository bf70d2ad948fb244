// Errors raised by the consensus core and its log storage. One class with a code, so callers can
// switch on `err.code` without importing every subclass.

/** The reasons the consensus core refuses a request. */
export type RaftErrorCode =
  | 'ProposalDropped'
  | 'Compacted'
  | 'SnapOutOfDate'
  | 'SnapshotTemporarilyUnavailable'
  | 'Unavailable'
  | 'StepLocalMsg'
  | 'StepPeerNotFound'
  | 'ConfChangePending'
  | 'InvalidConfig'
  | 'Internal';

/** A typed error from server/raft. */
export class RaftError extends Error {
  constructor(
    readonly code: RaftErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RaftError';
  }
}

/** The requested index is older than the storage's first index (it was compacted away). */
export class CompactedError extends RaftError {
  constructor() {
    super('Compacted', 'requested index is unavailable due to compaction');
  }
}

/** The requested index is newer than the storage's last index. */
export class UnavailableError extends RaftError {
  constructor() {
    super('Unavailable', 'requested entry at index is unavailable');
  }
}

/** A snapshot older than the current one was offered. */
export class SnapOutOfDateError extends RaftError {
  constructor() {
    super('SnapOutOfDate', 'requested index is older than the existing snapshot');
  }
}

/** The storage cannot produce a snapshot right now; the leader retries later. */
export class SnapshotTemporarilyUnavailableError extends RaftError {
  constructor() {
    super('SnapshotTemporarilyUnavailable', 'snapshot is temporarily unavailable');
  }
}

/** A proposal was not accepted (no leader, forwarding disabled, leadership transfer in progress, removed). */
export class ProposalDroppedError extends RaftError {
  constructor(reason = 'raft proposal dropped') {
    super('ProposalDropped', reason);
  }
}
