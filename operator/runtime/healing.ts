// What a runtime offers for replacing a member that cannot come back (the planner's replaceMember). Optional, on top
// of scaling (runtime/scaling.ts: the peer URL the successor is added with). A runtime without it cannot carry out
// replaceMember (the step fails, saying so).
import type { MemberLoss } from '../planner/types.js';

/**
 * What a member's refusal to start says about its data, from the line it stopped with (svc's own words): its ID
 * already bootstrapped while its data dir is empty (it lost its data), a corrupt database or write-ahead log, a
 * database missing beside its consensus snapshot. Any other failure is not a loss (the member is left to a person).
 */
export function lossInLine(line: string): MemberLoss | undefined {
  if (/member [0-9a-f]+ has already been bootstrapped/.test(line)) return { cause: 'AlreadyBootstrapped', detail: `its start was refused: ${line}` };
  // (the initial corruption check: its KV hash differs from its peers' at the same revision)
  if (/database file \S+ is corrupt|wal: corrupt record|failed to find database snapshot file|found data inconsistency with peers/.test(line)) return { cause: 'DataCorrupt', detail: `its start failed: ${line}` };
  return undefined;
}

/**
 * The way out a member's last line points to when its stop is not a loss but a full volume (svc exits on ENOSPC
 * rather than write a torn log; its data stays intact and it starts again once there is room).
 */
export function wayOutOfLine(line: string): string | undefined {
  if (/ENOSPC|no space left on device/i.test(line)) {
    return 'its volume is full (no space left on device): give it room (a larger spec.storage.size where the StorageClass allows expansion; locally, free or grow the disk of its data dir), then it starts again with its data and catches up; spec.maintenance.quotaBackendBytes keeps the database well below the volume';
  }
  return undefined;
}

/** The healing side of a runtime. */
export interface HealingRuntime {
  /**
   * Stops member `name` and gives it a fresh, empty data dir (a new volume), so that its next start joins the
   * running cluster `join` (member names, itself included; `--initial-cluster-state existing`) as the learner the
   * engine added for it. Does not start it (the engine adds the learner first, then ScalingRuntime.startMember).
   * Idempotent; called only while no successor is in the member list.
   */
  resetMember(name: string, join: string[]): Promise<void>;
  /**
   * Starts member `name`, reset and added back as a learner, joining `join` (idempotent). Local: its process;
   * Kubernetes: the StatefulSet recreates its pod, so only the join list is kept applied.
   */
  startReplacement(name: string, join: string[]): Promise<void>;
}
