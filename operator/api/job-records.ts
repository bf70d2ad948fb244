// What the backup and restore Jobs report to the operator: `svc-operator backup|restore` (cli/backup.ts) writes
// one of these as JSON to the container's termination message, runtime/kubernetes/backup-job.ts reads it back.
// Two processes, one contract, so it lives below both.

/** What `backup` reports (the operator adds where the file is, in its own terms). */
export interface BackupRecord {
  /** File name inside --dir. */
  file: string;
  member: string;
  revision: number;
  size: number;
  sha256: string;
  time: string;
  /** Files removed by --keep. */
  pruned: string[];
}

/** What `restore` reports. */
export interface RestoreRecord {
  snapshot: string;
  /** sha256 of the database bytes of the snapshot. */
  sha256: string;
  clusterId: string;
  /** Member name -> member id (hex); `skipped` members were restored by an earlier run. */
  members: Array<{ name: string; memberId?: string; skipped?: boolean }>;
}
