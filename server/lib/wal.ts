// svc/wal: the write-ahead log as a library. Every function takes a structured logger first (the spec's 3.4
// library change).
export {
  createWal as create,
  openWal as open,
  openWalForRead as openForRead,
  repairWal as repair,
  walExists as exists,
  Wal,
  WalCorruptError,
  WalError,
  type WalSnapshotMarker,
  type WalOptions,
  type WalReadResult,
} from '../storage/wal.js';
export type { Logger } from '../log/logger.js';
