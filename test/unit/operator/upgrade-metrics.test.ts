// The per-cluster upgrade metrics, as /metrics shows them, from steps and recorded progress.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { UpgradeMetrics } from '../../../operator/controller/metrics.js';
import { STEP_KINDS, type Step, type UpgradeProgress } from '../../../operator/planner/index.js';

const progress = (extra: Partial<UpgradeProgress> = {}): UpgradeProgress =>
  ({ from: '3.3.27', to: '3.4.34', step: 'restartMember', startedAt: 1_000, restarts: {}, membersDone: [], ...extra });

describe('operator: upgrade metrics', () => {
  let registry: Registry;
  let m: UpgradeMetrics;
  beforeEach(() => {
    registry = new Registry();
    m = new UpgradeMetrics(registry);
  });

  it('certificate expiry per Secret (the chart\'s expiry alerts read it); a Secret no longer named and a deleted cluster drop their series', async () => {
    m.certificates('ns', 'kv', [{ secret: 'kv-client', use: 'client', notAfter: 1_900_000_000 }, { secret: 'kv-peer', use: 'peer', notAfter: 1_800_000_000 }]);
    let text = await registry.metrics();
    expect(text).to.contain('svc_operator_certificate_expiry_timestamp_seconds{namespace="ns",cluster="kv",secret="kv-client",use="client"} 1900000000');
    expect(text).to.contain('svc_operator_certificate_expiry_timestamp_seconds{namespace="ns",cluster="kv",secret="kv-peer",use="peer"} 1800000000');
    m.certificates('ns', 'kv', [{ secret: 'kv-client2', use: 'client', notAfter: 1_950_000_000 }]);
    text = await registry.metrics();
    expect(text).to.not.contain('secret="kv-peer"').and.to.not.contain('secret="kv-client",');
    expect(text).to.contain('secret="kv-client2",use="client"} 1950000000');
    m.forget('ns', 'kv');
    expect(await registry.metrics()).to.not.contain('svc_operator_certificate_expiry_timestamp_seconds{');
  });

  it('the step gauge is 1 for the current step only; members done follow the progress', async () => {
    m.observe('ns', 'kv', { kind: 'restartMember', member: 'kv-2', version: '3.4.34' }, progress({ membersDone: ['kv-1'] }));
    let text = await registry.metrics();
    expect(text).to.contain('svc_operator_upgrade_step{namespace="ns",cluster="kv",step="restartMember"} 1');
    expect(text).to.contain('svc_operator_upgrade_step{namespace="ns",cluster="kv",step="snapshot"} 0');
    expect(text).to.contain('svc_operator_upgrade_members_done{namespace="ns",cluster="kv"} 1');
    m.observe('ns', 'kv', { kind: 'moveLeader', from: 'kv-0', to: 'kv-1' }, progress({ membersDone: ['kv-1', 'kv-2'] }));
    text = await registry.metrics();
    expect(text).to.contain('svc_operator_upgrade_step{namespace="ns",cluster="kv",step="restartMember"} 0');
    expect(text).to.contain('svc_operator_upgrade_step{namespace="ns",cluster="kv",step="moveLeader"} 1');
    expect(text).to.contain('svc_operator_upgrade_members_done{namespace="ns",cluster="kv"} 2');
    expect(text).to.not.contain('svc_operator_upgrade_duration_seconds{');
  });

  it('while a cluster scales, the step gauge is 1 for the scaling kind; every kind of the step table has its series', async () => {
    const gauge = async () => {
      const text = await registry.metrics();
      return Object.fromEntries([...text.matchAll(/^svc_operator_upgrade_step\{namespace="ns",cluster="kv",step="(\w+)"\} (\d)$/gm)].map((x) => [x[1], Number(x[2])]));
    };
    const steps: Step[] = [
      { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] },
      { kind: 'startMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] },
      { kind: 'removeMember', member: 'kv-3', id: '42' },
      { kind: 'retireMember', member: 'kv-3' },
    ];
    for (const step of steps) {
      m.observe('ns', 'kv', step, undefined);
      const g = await gauge();
      expect(Object.keys(g).sort(), step.kind).to.deep.equal([...STEP_KINDS].sort());
      expect(Object.entries(g).filter(([, v]) => v === 1), step.kind).to.deep.equal([[step.kind, 1]]);
    }
  });

  it('a finished upgrade sets its duration; a superseded one does not', async () => {
    m.observe('ns', 'kv', { kind: 'steady', version: '3.4.34' }, progress({ finishedAt: 91_500, membersDone: ['kv-1', 'kv-2', 'kv-0'] }));
    m.observe('ns', 'other', { kind: 'steady', version: '3.3.27' }, progress({ finishedAt: 5_000, supersededBy: '3.3.27' }));
    const text = await registry.metrics();
    expect(text).to.contain('svc_operator_upgrade_duration_seconds{namespace="ns",cluster="kv",from="3.3.27",to="3.4.34"} 90.5');
    expect(text).to.not.contain('cluster="other",from=');
    expect(text).to.contain('svc_operator_upgrade_step{namespace="ns",cluster="kv",step="steady"} 1');
  });

  it('counts steps carried out, and forgets a deleted cluster', async () => {
    m.stepDone('ns', 'kv', { kind: 'restartMember', member: 'kv-1', version: '3.4.34' });
    m.stepDone('ns', 'kv', { kind: 'restartMember', member: 'kv-2', version: '3.4.34' });
    m.stepDone('ns', 'kv', { kind: 'snapshot', member: 'kv-0', from: '3.3.27', to: '3.4.34' });
    m.stepDone('ns', 'kv', { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-3'] });
    m.observe('ns', 'kv', { kind: 'steady', version: '3.4.34' }, progress({ finishedAt: 2_000 }));
    let text = await registry.metrics();
    expect(text).to.contain('svc_operator_upgrade_steps_total{namespace="ns",cluster="kv",kind="restartMember"} 2');
    expect(text).to.contain('svc_operator_upgrade_steps_total{namespace="ns",cluster="kv",kind="snapshot"} 1');
    expect(text).to.contain('svc_operator_upgrade_steps_total{namespace="ns",cluster="kv",kind="addMember"} 1');
    m.forget('ns', 'kv');
    text = await registry.metrics();
    expect(text).to.not.contain('cluster="kv"');
  });

  it('counts replacements by cause when the successor is promoted (a scale-up\'s promotion is none)', async () => {
    m.stepDone('ns', 'kv', { kind: 'replaceMember', member: 'kv-1', id: '7', cause: 'DataLost', detail: 'gone', join: ['kv-0', 'kv-1', 'kv-2'] });
    m.stepDone('ns', 'kv', { kind: 'promoteMember', member: 'kv-1', id: '9', replaced: 'DataLost' });
    m.stepDone('ns', 'kv', { kind: 'promoteMember', member: 'kv-3', id: '10' });
    m.stepDone('ns', 'kv', { kind: 'promoteMember', member: 'kv-2', id: '11', replaced: 'DataCorrupt' });
    let text = await registry.metrics();
    expect(text).to.contain('svc_operator_member_replacements_total{namespace="ns",cluster="kv",cause="DataLost"} 1');
    expect(text).to.contain('svc_operator_member_replacements_total{namespace="ns",cluster="kv",cause="DataCorrupt"} 1');
    expect(text).to.not.contain('cause="MemberIdChanged"');
    m.forget('ns', 'kv');
    text = await registry.metrics();
    expect(text).to.not.contain('cluster="kv"');
  });
});
