// The backend space quota (--quota-backend-bytes): writes are refused while NOSPACE is raised, and a write that
// would pass the quota raises it (through the log, so every member refuses writes).
import type { Logger } from '../log/logger.js';
import { Errors } from './errors.js';
import type { AlarmEntry, Proposals, QuotaGuard } from './interfaces.js';

export interface QuotaDeps {
  memberId: bigint;
  /** 0: no quota. */
  quotaBytes: number;
  logger: Logger;
  alarms(): readonly AlarmEntry[];
  dbSize(): number;
  proposals: Proposals;
}

export class Quota implements QuotaGuard {
  constructor(private readonly d: QuotaDeps) {}

  /** Synchronous when the write may go (no promise per request); a rejected promise when it may not. */
  checkQuota(extra: number): Promise<void> | undefined {
    const { d } = this;
    if (d.alarms().some((a) => a.alarm === 'NOSPACE')) return Promise.reject(Errors.noSpace());
    const quota = d.quotaBytes;
    if (quota > 0 && d.dbSize() + extra > quota) return this.raise(quota);
    return undefined;
  }

  private async raise(quota: number): Promise<void> {
    const { d } = this;
    d.logger.warn('database space exceeded; raising the NOSPACE alarm', { 'quota-size-bytes': quota, 'current-db-size-bytes': d.dbSize() });
    await d.proposals.propose({ id: d.proposals.nextRequestId(), kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: d.memberId, alarm: 'NOSPACE' } }).catch(() => undefined);
    throw Errors.noSpace();
  }
}
