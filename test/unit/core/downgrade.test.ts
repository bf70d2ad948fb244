// The downgrade job's pure parts (server/cluster/downgrade.ts): the target a request names, VALIDATE's checks, the
// leader's decisions while a job is enabled, and which members a job admits per release.
import { expect } from 'chai';
import {
  admitDuringDowngrade, checkJoinDuringDowngrade, decodeDowngradeInfo, downgradeFinished, downgradeResponseVersion, encodeDowngradeInfo, lowerForDowngrade,
  NO_DOWNGRADE, parseDowngradeTarget, validateDowngrade,
} from '../../../server/cluster/downgrade.js';
import { releaseFor } from '../../../server/releases.js';

const job = { enabled: true, targetVersion: '3.5.0' };

describe('cluster/downgrade', () => {
  it('reads a target as the reference\'s semver parser does: X.Y, X.Y.Z, X.Y.Z-pre name X.Y; anything else is a wrong format', () => {
    for (const v of ['3.5', '3.5.0', '3.5.7', '3.5.0-alpha.1', '3.5.0+meta']) expect(parseDowngradeTarget(v), v).to.equal('3.5');
    for (const v of ['v3.5', '3', 'abc', '', '3.5.0.1', '3.a', '3.5.x']) expect(parseDowngradeTarget(v), v).to.equal(undefined);
  });

  it('VALIDATE: format, a cluster version, exactly one minor down, no job in progress', () => {
    expect(validateDowngrade('3.5', '3.6', NO_DOWNGRADE)).to.deep.equal({ ok: true, target: '3.5' });
    expect(validateDowngrade('3.6.2', '3.7', NO_DOWNGRADE)).to.deep.equal({ ok: true, target: '3.6' });
    expect(validateDowngrade('v3.5', '3.6', NO_DOWNGRADE)).to.deep.equal({ ok: false, refusal: 'wrong-format' });
    expect(validateDowngrade('3.5', undefined, NO_DOWNGRADE)).to.deep.equal({ ok: false, refusal: 'no-cluster-version' });
    for (const t of ['3.6', '3.4', '3.0', '3.7']) expect(validateDowngrade(t, '3.6', NO_DOWNGRADE), t).to.deep.equal({ ok: false, refusal: 'invalid-target' });
    expect(validateDowngrade('3.5', '3.6', job)).to.deep.equal({ ok: false, refusal: 'in-progress' });
  });

  it('answers the cluster version as 3.5 does ("3.6.0") and as 3.6+ do ("3.6")', () => {
    expect(downgradeResponseVersion(releaseFor('3.5.21').downgrade, '3.6')).to.equal('3.6.0');
    expect(downgradeResponseVersion(releaseFor('3.6.16').downgrade, '3.6')).to.equal('3.6');
    expect(downgradeResponseVersion(releaseFor('3.7.3').downgrade, '3.7')).to.equal('3.7');
  });

  it('keeps the job in the reference\'s JSON', () => {
    expect(encodeDowngradeInfo(job)).to.equal('{"target-version":"3.5.0","enabled":true}');
    expect(encodeDowngradeInfo(NO_DOWNGRADE)).to.equal('{"target-version":"","enabled":false}');
    expect(decodeDowngradeInfo('{"target-version":"3.5.0","enabled":true}')).to.deep.equal(job);
  });

  it('the leader lowers the cluster version to the target once the lowest member is one minor above it', () => {
    expect(lowerForDowngrade('3.6', job, ['3.6.16', '3.6.0', '3.7.3'])).to.deep.equal({ kind: 'lower', version: '3.5' });
    expect(lowerForDowngrade('3.5', job, ['3.6.16', '3.5.21'])).to.deep.equal({ kind: 'none' });
    expect(lowerForDowngrade('3.6', job, ['3.6.16', undefined])).to.deep.equal({ kind: 'none' });
    expect(lowerForDowngrade('3.7', job, ['3.7.3'])).to.deep.equal({ kind: 'refuse', message: 'Cannot downgrade from cluster-version to downgrade-target' });
    expect(lowerForDowngrade('3.6', job, ['3.6.16', '3.5.21'])).to.deep.equal({ kind: 'refuse', message: 'Cannot downgrade from minimal-server-version to downgrade-target' });
  });

  it('the job is finished when every member runs the target minor; the first that does not is named', () => {
    expect(downgradeFinished(job, ['3.5.21', '3.5.0', '3.5.35'])).to.deep.equal({ done: true });
    expect(downgradeFinished(job, ['3.5.21', '3.6.16', '3.5.0'])).to.deep.equal({ done: false, index: 1 });
    expect(downgradeFinished(job, ['3.5.21', undefined])).to.deep.equal({ done: false, index: 1 });
  });

  it('3.5 admits exactly a member of the target while a job is enabled; 3.6+ leave it to the cluster version', () => {
    const r35 = releaseFor('3.5.21').downgrade;
    expect(admitDuringDowngrade(r35, '3.5.21', job)).to.deep.equal({ ok: true });
    const refused = admitDuringDowngrade(r35, '3.5.21', { enabled: true, targetVersion: '3.4.0' });
    expect(refused && !refused.ok && refused.reason).to.contain('invalid downgrade; server version is not allowed to join when downgrade is enabled');
    expect(admitDuringDowngrade(r35, '3.5.21', NO_DOWNGRADE)).to.equal(undefined);
    expect(admitDuringDowngrade(releaseFor('3.6.16').downgrade, '3.6.16', { enabled: true, targetVersion: '3.6.0' })).to.equal(undefined);
  });

  it('a member joining without data during a downgrade accepts only a cluster one minor above it', () => {
    expect(checkJoinDuringDowngrade('3.5.21', '3.6')).to.deep.equal({ ok: true });
    const low = checkJoinDuringDowngrade('3.5.21', '3.5');
    expect(!low.ok && low.reason).to.contain('cluster version of remote member is not compatible; too low');
    const high = checkJoinDuringDowngrade('3.5.21', '3.7');
    expect(!high.ok && high.reason).to.contain('too high');
  });
});
