import { expect } from 'chai';
import { checkDeliveries, deliveryVerdict } from '../../../bench/lib/watch-check.js';

describe('bench: watch fan-out delivery check (exactly once, in order)', () => {
  const expected = [5, 6, 7, 8];

  it('accepts every watcher getting every revision once, in order (acknowledgements in any order)', () => {
    const c = checkDeliveries([7, 5, 8, 6], [
      [5, 6, 7, 8],
      [5, 6, 7, 8],
    ]);
    expect(c.ok).to.equal(true);
    expect(c).to.include({ watchers: 2, expectedPerWatcher: 4, delivered: 8, missing: 0, duplicated: 0, outOfOrder: 0, unexpected: 0, failingWatchers: 0 });
    expect(c.firstProblem).to.equal(undefined);
    expect(deliveryVerdict(c)).to.equal('ok');
  });

  it('reports a missing event, and only for the watcher that lacks it', () => {
    const c = checkDeliveries(expected, [
      [5, 6, 7, 8],
      [5, 7, 8],
    ]);
    expect(c.ok).to.equal(false);
    expect(c).to.include({ missing: 1, duplicated: 0, outOfOrder: 0, failingWatchers: 1, delivered: 7 });
    expect(c.firstProblem).to.equal('watcher 1: 1 of 4 events never delivered');
    expect(deliveryVerdict(c)).to.equal('FAILED (1 watchers: 1 missing)');
  });

  it('reports a duplicate, also when the total count matches (a duplicate hiding a loss)', () => {
    const c = checkDeliveries(expected, [[5, 6, 6, 8]]);
    expect(c.ok).to.equal(false);
    expect(c).to.include({ missing: 1, duplicated: 1, outOfOrder: 0, delivered: 4 });
    expect(c.firstProblem).to.equal('watcher 0: revision 6 delivered 2 times');
  });

  it('reports an event that arrives after a higher revision as out of order', () => {
    const c = checkDeliveries(expected, [[5, 7, 6, 8]]);
    expect(c.ok).to.equal(false);
    expect(c).to.include({ missing: 0, duplicated: 0, outOfOrder: 1 });
    expect(c.firstProblem).to.equal('watcher 0: revision 6 delivered after revision 7');
  });

  it('reports a revision no acknowledged put wrote as unexpected', () => {
    const c = checkDeliveries(expected, [[5, 6, 7, 8, 9]]);
    expect(c.ok).to.equal(false);
    expect(c).to.include({ unexpected: 1, missing: 0 });
    expect(deliveryVerdict(c)).to.equal('FAILED (1 watchers: 1 unexpected)');
  });

  it('counts a watcher that got nothing as missing every event', () => {
    const c = checkDeliveries(expected, [[5, 6, 7, 8], [], [5, 6, 7, 8]]);
    expect(c).to.include({ ok: false, missing: 4, failingWatchers: 1 });
  });

  it('accepts no puts and no events (nothing to deliver)', () => {
    expect(checkDeliveries([], [[], []]).ok).to.equal(true);
  });
});
