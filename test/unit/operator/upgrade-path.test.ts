// Upgrade paths from the release table: patch hops to the lowest patch the next line accepts, lines passed through
// at their newest patch, and the guide's checks before a hop (nothing changed when one fails).
import { expect } from 'chai';
import fc from 'fast-check';
import { upgradePath } from '../../../operator/planner/upgrade-path.js';
import { hopPrerequisite } from '../../../operator/planner/plan.js';
import { plan } from '../../../operator/planner/index.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { releaseFor } from '../../../server/releases.js';
import { Sim } from './sim.js';

const spec = (version: string, replicas = 3) => withDefaults({ version, replicas });

describe('operator/planner upgrade paths', () => {
  it('names every hop the reference\'s guides ask for', () => {
    expect(upgradePath('3.5.21', '3.7.3')).to.deep.equal(['3.5.32', '3.6.16', '3.7.3']);
    expect(upgradePath('3.5.21', '3.6.2')).to.deep.equal(['3.5.32', '3.6.2']);
    expect(upgradePath('3.5.33', '3.7.0')).to.deep.equal(['3.6.16', '3.7.0']);
    expect(upgradePath('3.6.4', '3.7.3')).to.deep.equal(['3.6.11', '3.7.3']);
    expect(upgradePath('3.6.11', '3.7.3')).to.deep.equal(['3.7.3']);
    expect(upgradePath('3.3.27', '3.5.21')).to.deep.equal(['3.4.34', '3.5.21']);
    expect(upgradePath('3.5.21', '3.5.35'), 'a patch change is one hop').to.deep.equal(['3.5.35']);
    expect(upgradePath('3.6.16', '3.5.21'), 'a downgrade is one hop, judged by the planner').to.deep.equal(['3.5.21']);
    expect(upgradePath('3.5.21', '3.9.0'), 'an unknown line: the planner refuses it').to.deep.equal(['3.9.0']);
  });

  it('every hop is a patch change or one minor up onto an accepted patch, and the last is the target', () => {
    const versions = ['3.3.27', '3.4.2', '3.4.34', '3.5.0', '3.5.21', '3.5.32', '3.5.35', '3.6.0', '3.6.10', '3.6.16', '3.7.0', '3.7.3'];
    fc.assert(
      fc.property(fc.constantFrom(...versions), fc.constantFrom(...versions), (from, to) => {
        const hops = upgradePath(from, to);
        expect(hops.at(-1)).to.equal(to);
        let cur = from;
        for (const h of hops) {
          const [, a, p] = cur.split('.').map(Number);
          const [, b] = h.split('.').map(Number);
          if (b === a + 1) expect(p, `${cur} -> ${h}`).to.be.at.least(releaseFor(h).fromPreviousMinPatch);
          else expect(b === a || h === to, `${cur} -> ${h}`).to.equal(true);
          cur = h;
        }
      }),
    );
  });

  it('plans the first hop with the whole path, and says a later hop\'s refusal before the first begins', () => {
    const sim = new Sim(3, '3.5.21');
    expect(plan(spec('3.7.3'), sim.observe(), undefined)).to.deep.include({ kind: 'snapshot', from: '3.5.21', to: '3.5.32', hops: ['3.5.32', '3.6.16', '3.7.3'] });
    const old = new Sim(3, '3.3.27');
    old.auth = true;
    const refused = plan(spec('3.5.21'), old.observe(), undefined);
    expect(refused).to.include({ kind: 'blocked', code: 'AuthEnabledUpgradeTo35', condition: 'UpgradeBlocked' });
    expect((refused as { reason: string }).reason).to.match(/^cannot upgrade to 3\.5\.21 \(through 3\.5\.21 on the way\)|^cannot upgrade to 3\.5\.21: authentication is enabled/);
  });

  it('promotes a learner before a hop onto a new line; refuses the hop while an alarm is raised or custom v2 data is left, naming the way out', () => {
    const sim = new Sim(3, '3.5.32');
    const o = sim.observe();
    const withLearner = { ...o, clusterMembers: [{ id: '1000', member: 'm0', started: true }, { id: '1001', member: 'm1', started: true }, { id: '1002', member: 'm2', started: true, isLearner: true }] };
    expect(plan(spec('3.6.16'), withLearner, undefined)).to.deep.equal({ kind: 'promoteMember', member: 'm2', id: '1002' });
    // a raised alarm is relieved first (maintenance.ts); the hop's own guard refuses it where no relief is planned
    expect(plan(spec('3.6.16'), { ...o, noSpace: ['1000'] }, undefined)).to.include({ kind: 'defragMember', reason: 'NoSpace' });
    const guard = hopPrerequisite('3.6.16', { ...o, noSpace: ['1000'] }, o.members);
    expect(guard).to.deep.include({ kind: 'blocked', code: 'AlarmRaised' });
    expect((guard as { reason: string }).reason).to.equal('cannot begin the upgrade to 3.6.16: the NOSPACE alarm is raised; the upgrade begins once it is disarmed (svc-operator local alarm list / kubectl svc alarm list show it)');
    const v2 = plan(spec('3.6.16'), { ...o, v2DataBytes: 120 }, undefined);
    expect(v2).to.include({ kind: 'blocked', code: 'CustomV2Data' });
    expect((v2 as { reason: string }).reason).to.match(/^cannot begin the upgrade to 3\.6\.16: the v2 store holds about 120 bytes of keys \(custom v2 data\), which 3\.6 refuses/);
    expect(plan(spec('3.5.35'), { ...o, v2DataBytes: 120 }, undefined), 'a patch hop does not look at v2 data').to.include({ kind: 'snapshot' });
    const early = new Sim(3, '3.5.21').observe();
    expect((hopPrerequisite('3.6.16', early, early.members) as { reason: string }).reason).to.equal(
      'cannot begin the upgrade to 3.6.16: member m0 runs 3.5.21, and 3.6 is reached only from 3.5.32 or later (the reference\'s upgrade guide); set spec.version to 3.5.32 first, or to 3.6.16 from there',
    );
    const below = new Sim(3, '3.5.21');
    below.members[2].configured = '3.5.33';
    below.members[2].release = '3.5.33';
    // mixed patches: the path starts at the lowest, so the patch hop comes first
    expect(plan(spec('3.6.16'), below.observe(), undefined)).to.include({ kind: 'blocked', code: 'MixedReleases' });
  });
});
