// What a runtime offers for replacing a member that cannot come back (the planner's replaceMember). Optional, on top
// of scaling (runtime/scaling.ts: the peer URL the successor is added with). A runtime without it cannot carry out
// replaceMember (the step fails, saying so).
import type { ReplacementRecord } from '../planner/types.js';

/** The healing side of a runtime. */
export interface HealingRuntime {
  /** The replacements record as stored (undefined: none yet). */
  loadReplacements(): Promise<ReplacementRecord | undefined>;
  /** Records replacements durably (before the step that begins one acts). */
  saveReplacements(record: ReplacementRecord): Promise<void>;
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

/** True when the runtime can replace members. */
export function canHeal<T extends object>(rt: T): rt is T & HealingRuntime {
  const r = rt as Partial<HealingRuntime>;
  return typeof r.loadReplacements === 'function' && typeof r.saveReplacements === 'function' && typeof r.resetMember === 'function' && typeof r.startReplacement === 'function';
}
