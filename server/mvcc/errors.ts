// Errors of the mvcc layer. Messages match the reference's so clients see the same text.

export type MvccErrorCode =
  | 'COMPACTED'
  | 'FUTURE_REV'
  | 'REVISION_NOT_FOUND'
  | 'LEASE_NOT_FOUND'
  | 'LEASE_EXISTS'
  | 'LEASE_TTL_TOO_LARGE'
  | 'NOT_PRIMARY'
  | 'TXN_IN_PROGRESS'
  | 'EMPTY_WATCHER_RANGE'
  | 'WATCHER_NOT_EXIST';

const MESSAGES: Record<MvccErrorCode, string> = {
  COMPACTED: 'mvcc: required revision has been compacted',
  FUTURE_REV: 'mvcc: required revision is a future revision',
  REVISION_NOT_FOUND: 'mvcc: revision not found',
  LEASE_NOT_FOUND: 'lease not found',
  LEASE_EXISTS: 'lease already exists',
  LEASE_TTL_TOO_LARGE: 'too large lease TTL',
  NOT_PRIMARY: 'not a primary lessor',
  TXN_IN_PROGRESS: 'mvcc: a write transaction is already open',
  EMPTY_WATCHER_RANGE: 'mvcc: watcher range is empty',
  WATCHER_NOT_EXIST: 'mvcc: watcher does not exist',
};

/** An mvcc or lease error; `code` is stable, `message` is the reference's text. */
export class MvccError extends Error {
  /** Set on COMPACTED errors: the store's compact revision. */
  compactRevision?: number;

  constructor(readonly code: MvccErrorCode, message?: string) {
    super(message ?? MESSAGES[code]);
    this.name = 'MvccError';
  }
}

/** "mvcc: required revision has been compacted" */
export function errCompacted(compactRevision?: number): MvccError {
  const e = new MvccError('COMPACTED');
  e.compactRevision = compactRevision;
  return e;
}

/** "mvcc: required revision is a future revision" */
export function errFutureRev(): MvccError {
  return new MvccError('FUTURE_REV');
}
