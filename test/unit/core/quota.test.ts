// The space quota without a db: writes are refused while NOSPACE is raised, and a write that would pass the
// quota raises the alarm through the log and is refused.
import { expect } from 'chai';
import { Quota } from '../../../server/core/quota.js';
import { Errors } from '../../../server/core/errors.js';
import type { AlarmEntry } from '../../../server/core/interfaces.js';
import type { InternalRequest } from '../../../server/core/requests.js';
import { nopLogger } from '../../../server/log/logger.js';

function quota(o: { size: number; quotaBytes: number; alarms?: AlarmEntry[] }) {
  const proposed: InternalRequest[] = [];
  const q = new Quota({
    memberId: 1n, quotaBytes: o.quotaBytes, logger: nopLogger,
    alarms: () => o.alarms ?? [],
    dbSize: () => o.size,
    proposals: { propose: async <T>(r: InternalRequest) => { proposed.push(r); return undefined as T; }, nextRequestId: () => 9n },
  });
  return { q, proposed };
}

const refused = (p: Promise<void> | undefined) => (p ?? Promise.resolve()).then(() => undefined, (e: Error) => e.message);

describe('core/quota', () => {
  it('lets a write through below the quota, and always without one', async () => {
    expect(await refused(quota({ size: 100, quotaBytes: 1000 }).q.checkQuota(10))).to.equal(undefined);
    expect(await refused(quota({ size: 5000, quotaBytes: 0 }).q.checkQuota(10))).to.equal(undefined);
  });

  it('raises NOSPACE through the log for a write that would pass the quota, and refuses it', async () => {
    const { q, proposed } = quota({ size: 995, quotaBytes: 1000 });
    expect(await refused(q.checkQuota(10))).to.equal(Errors.noSpace().message);
    expect(proposed).to.deep.equal([{ id: 9n, kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: 1n, alarm: 'NOSPACE' } }]);
  });

  it('refuses every write while NOSPACE is raised, without proposing again', async () => {
    const { q, proposed } = quota({ size: 0, quotaBytes: 1000, alarms: [{ memberId: 2n, alarm: 'NOSPACE' }] });
    expect(await refused(q.checkQuota(0))).to.equal(Errors.noSpace().message);
    expect(proposed).to.have.length(0);
  });
});
