// UpgradeProgress as the SvcCluster status shows it (status.upgrade), for runtimes that publish status.
import type { UpgradeStatus } from '../api/types.js';
import type { UpgradeProgress } from './types.js';

/** status.upgrade of a recorded progress. */
export function upgradeStatus(p: UpgradeProgress): UpgradeStatus {
  return {
    from: p.from,
    to: p.to,
    step: p.supersededBy ? `superseded by ${p.supersededBy}` : p.step,
    membersDone: [...p.membersDone],
    hops: p.hops ? [...p.hops] : undefined,
    startedAt: new Date(p.startedAt).toISOString(),
    finishedAt: p.finishedAt === undefined ? undefined : new Date(p.finishedAt).toISOString(),
    snapshot: p.snapshot,
  };
}
