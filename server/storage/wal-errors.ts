// Typed errors of the write-ahead log. Callers branch on `code`, never on message text.

export type WalErrorCode =
  | 'WAL_CORRUPT'
  | 'WAL_EXISTS'
  | 'WAL_FILE_NOT_FOUND'
  | 'WAL_SNAPSHOT_NOT_FOUND'
  | 'WAL_SNAPSHOT_MISMATCH'
  | 'WAL_METADATA_CONFLICT'
  | 'WAL_GAP'
  | 'WAL_LOCKED'
  | 'WAL_CLOSED'
  | 'WAL_NOT_READ'
  | 'WAL_READ_ONLY'
  | 'WAL_FAILED';

/** Any WAL failure; `code` says which. */
export class WalError extends Error {
  constructor(
    readonly code: WalErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WalError';
  }
}

/** Committed data is damaged (not a torn tail): the WAL refuses to open rather than drop it. */
export class WalCorruptError extends WalError {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super('WAL_CORRUPT', `wal: corrupt record in ${file} at offset ${offset}: ${reason}`);
    this.name = 'WalCorruptError';
  }
}
