// What the backup, restore and drill Jobs report to the operator: `svc-operator backup|restore|verify` (cli/backup.ts) writes
// one of these as JSON to the container's termination message, runtime/kubernetes/backup-job.ts reads it back.
// Two processes, one contract, so it lives below both.
import type { SnapshotFacts } from './types.js';

/** What `backup` reports (the operator adds where the file is, in its own terms). */
export interface BackupRecord extends SnapshotFacts {
  /** File name inside --dir. */
  file: string;
  /** Files removed by --keep. */
  pruned: string[];
  /** Keys of the snapshot objects uploaded to the object-store destinations (--s3), in their order. */
  uploaded?: string[];
}

/**
 * What a Job reports when it fails: the message, and for a destination that failed its name as messages give it
 * and the cause (backup/destinations/store.ts DestinationCause), so the operator classifies it as the local runtime does.
 */
export interface JobError {
  error: string;
  destination?: string;
  cause?: string;
}

/** What `restore` reports. */
export interface RestoreRecord {
  snapshot: string;
  /** sha256 of the database bytes of the snapshot. */
  sha256: string;
  clusterId: string;
  /** The object it was downloaded from (a restore from an object-store destination). */
  object?: string;
  /** The revision restored when delta segments were replayed onto the object (continuous backup). */
  revision?: number;
  /** Member name -> member id (hex); `skipped` members were restored by an earlier run. */
  members: Array<{ name: string; memberId?: string; skipped?: boolean }>;
}

/**
 * What `verify` (a restore drill) reports: the restored member's KV hash at the revision, or why there is none. A
 * drill that fails is a result, not a Job failure (`error` is kept for the Job's own failures).
 */
export interface VerifyRecord {
  snapshot: string;
  revision: number;
  hash?: number;
  compactRevision?: number;
  /** Why no hash was read (the file failed its checksum, the scratch member did not start...). */
  failure?: string;
}
