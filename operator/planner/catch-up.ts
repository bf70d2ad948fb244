// When a member counts as caught up with the leader (the upgrade's gate, scaling's, and a learner's promotion).
import type { ObservedCluster } from './types.js';

/** Smallest applied-index gap between a member and the leader that still counts as caught up. */
export const CATCH_UP_SLACK = 100;
/** At a higher write rate, a follower within this many seconds of writes of the leader counts as caught up. */
export const CATCH_UP_SECONDS = 1;

/** The applied-index gap a follower may have in observation `o`: CATCH_UP_SLACK, or a second of writes at its rate. */
export function catchUpSlack(o: ObservedCluster): number {
  return Math.max(CATCH_UP_SLACK, Math.ceil((o.catchUp?.ratePerSecond ?? 0) * CATCH_UP_SECONDS));
}
