// Break-glass in the planner (suspension, hibernation and waking, a restart asked for) and the on-call decisions
// (planner/oncall.ts), and the command line's parser (cli/args.ts on node:util parseArgs).
import { expect } from 'chai';
import fc from 'fast-check';
import { withDefaults } from '../../../operator/api/validate.js';
import { isMutating } from '../../../operator/planner/steps.js';
import { plan, restartReason, type ObservedCluster, type ObservedMember } from '../../../operator/planner/index.js';
import { disarmDecision, moveLeaderDecision, restartDecision } from '../../../operator/planner/oncall.js';
import { parseArgs, UsageError } from '../../../operator/cli/args.js';
import { computeStatus } from '../../../operator/controller/status.js';
import { newMemory, runPass } from '../../../operator/orchestrator/engine.js';
import { FakeClient, FakeRuntime, World } from './engine-fake.js';
import { parseRestartRequest, requestsOf } from '../../../operator/runtime/kubernetes/kube-records.js';
import { ownedObjects, RESTART_TOKEN_ANNOTATION } from '../../../operator/runtime/kubernetes/manifests.js';

const V = '3.5.21';
const member = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => ({
  name: `kv-${i}`, id: String(10 + i), configuredVersion: V, release: V, clusterVersion: '3.5.0', running: true, healthy: true, leader: i === 0, appliedIndex: 100, configRevision: 'c1', ...extra,
});
const healthy = (extra: Partial<ObservedCluster> = {}): ObservedCluster => ({
  now: 1_000_000, members: [member(0), member(1), member(2)], authEnabled: false, revision: { config: 'c1' }, ...extra,
});
const spec = (extra = {}) => withDefaults({ version: V, replicas: 3, ...extra });

describe('operator: break-glass in the planner', () => {
  it('suspended: any mutating step becomes wait Suspended naming it; what mutates nothing is planned as usual', () => {
    const upgrade = plan(spec({ version: '3.5.22' }), healthy({ suspended: true }), undefined);
    expect(upgrade).to.include({ kind: 'wait', code: 'Suspended' });
    expect((upgrade as { reason: string }).reason).to.match(/svc\.dev\/reconcile: suspended.*next step then: snapshot from leader kv-0/);
    expect(plan(spec(), healthy({ suspended: true }), undefined)).to.deep.equal({ kind: 'steady', version: V });
    // property: whatever the observation, a suspended cluster never gets a mutating step
    fc.assert(fc.property(fc.integer({ min: 0, max: 3 }), fc.boolean(), fc.boolean(), fc.constantFrom(0, 1, 3, 5), (down, leaderless, hib, replicas) => {
      const members = [0, 1, 2].map((i) => member(i, { running: i !== down, healthy: i !== down, leader: !leaderless && i === 0 }));
      const o = healthy({ members, suspended: true, hibernated: hib, revision: { config: 'c2' } });
      expect(isMutating(plan(spec({ replicas, version: '3.5.21' }), o, undefined))).to.equal(false);
    }));
  });

  it('spec.replicas 0 hibernates the running members (data kept), then is settled; a replica count wakes the same members', () => {
    const o = healthy({ members: [member(0), member(1, { running: false, healthy: false }), member(2)] });
    expect(plan(spec({ replicas: 0 }), o, undefined)).to.deep.equal({ kind: 'hibernate', members: ['kv-0', 'kv-2'] });
    const stopped = healthy({ members: [0, 1, 2].map((i) => member(i, { running: false, healthy: false, leader: false })), hibernated: true });
    expect(plan(spec({ replicas: 0 }), stopped, undefined)).to.deep.equal({ kind: 'hibernated', members: 3 });
    // waking comes first, also when the spec asks for more members or another version than before
    expect(plan(spec({ replicas: 5, version: '3.5.22' }), stopped, undefined)).to.deep.equal({ kind: 'wake', members: ['kv-0', 'kv-1', 'kv-2'] });
    // members down without hibernation are not woken (the ordinary rules wait for them)
    expect(plan(spec(), { ...stopped, hibernated: undefined }, undefined).kind).to.equal('wait');
  });

  it('a restart asked for: each named member once (RestartRequested), followers first, the leader last after moveLeader', () => {
    const restart = { token: 't1', members: ['kv-0', 'kv-1', 'kv-2'] };
    expect(restartReason(member(1), { config: 'c1', restart })).to.equal('RestartRequested');
    expect(restartReason(member(1, { restartToken: 't1' }), { config: 'c1', restart })).to.equal(undefined);
    // a configuration change wins (one restart takes both)
    expect(restartReason(member(1, { configRevision: 'c0' }), { config: 'c1', restart })).to.equal('SpecChange');
    expect(plan(spec(), healthy({ revision: { config: 'c1', restart } }), undefined)).to.deep.equal({ kind: 'restartMember', member: 'kv-1', version: V, reason: 'RestartRequested' });
    const followersDone = healthy({ members: [member(0), member(1, { restartToken: 't1' }), member(2, { restartToken: 't1' })], revision: { config: 'c1', restart } });
    expect(plan(spec(), followersDone, undefined)).to.deep.include({ kind: 'moveLeader', from: 'kv-0' });
    const one = { token: 't2', members: ['kv-2'] };
    expect(plan(spec(), healthy({ revision: { config: 'c1', restart: one } }), undefined)).to.deep.include({ member: 'kv-2', reason: 'RestartRequested' });
    expect(plan(spec(), healthy({ members: [member(0), member(1), member(2, { restartToken: 't2' })], revision: { config: 'c1', restart: one } }), undefined).kind).to.equal('steady');
  });
});

describe('operator: a suspended cluster in the engine and in status', () => {
  it('the engine applies nothing (no prepare()), records nothing and acts on nothing until resumed; status says Suspended', async () => {
    const w = new World(3, '3.4.34', 0);
    const rt = new FakeRuntime(w, 'kubernetes');
    w.suspended = true;
    const client = new FakeClient(w);
    const memory = newMemory();
    const target = withDefaults({ version: '3.5.21', replicas: 3 });
    for (let i = 0; i < 3; i++) {
      const r = await runPass(rt, target, client, memory);
      expect(r.step).to.include({ kind: 'wait', code: 'Suspended' });
      expect(r.acted).to.equal(false);
      expect(r.observed.suspended).to.equal(true);
      const status = computeStatus({ spec: target, observed: r.observed, pods: new Map(), step: r.step, now: new Date(0) });
      expect(status.conditions!.find((c) => c.type === 'Suspended')).to.include({ status: 'True', reason: 'ReconcileSuspended' });
      expect(status.conditions!.find((c) => c.type === 'Progressing')).to.include({ status: 'True', reason: 'Suspended' });
    }
    expect(w.prepares).to.equal(0);
    expect(w.progress, 'no upgrade recorded').to.equal(undefined);
    w.suspended = false;
    const r = await runPass(rt, target, client, memory);
    expect(w.prepares).to.equal(1);
    expect(r.step.kind).to.equal('snapshot');
    const status = computeStatus({ spec: target, observed: r.observed, pods: new Map(), step: r.step, now: new Date(0) });
    expect(status.conditions!.find((c) => c.type === 'Suspended')).to.include({ status: 'False' });
  });
});

describe('operator: a hibernated cluster in status', () => {
  it('phase Hibernated, not Ready, not Reconciling, not Stalled; the members listed, none healthy', () => {
    const o = healthy({ members: [0, 1, 2].map((i) => member(i, { running: false, healthy: false, leader: false })), hibernated: true });
    const s = computeStatus({ spec: spec({ replicas: 0 }), observed: o, pods: new Map(), step: { kind: 'hibernated', members: 3 }, now: new Date(0) });
    expect(s.phase).to.equal('Hibernated');
    const c = (t: string) => s.conditions!.find((x) => x.type === t)!;
    expect(c('Ready')).to.include({ status: 'False', reason: 'Hibernated' });
    expect(c('Reconciling').status).to.equal('False');
    expect(c('Stalled').status).to.equal('False');
    expect(s.members!.map((m) => m.name)).to.deep.equal(['kv-0', 'kv-1', 'kv-2']);
    expect(s.ready).to.equal('0/0');
  });
});

describe('operator: on-call decisions', () => {
  it('move-leader: to the member named, else the most up-to-date follower; refused naming the cause', () => {
    expect(moveLeaderDecision(healthy(), 'kv-2')).to.deep.equal({ step: { kind: 'moveLeader', from: 'kv-0', to: 'kv-2', toId: '12' } });
    const o = healthy({ members: [member(0), member(1, { appliedIndex: 98 }), member(2)] });
    expect(moveLeaderDecision(o)).to.deep.include({ step: { kind: 'moveLeader', from: 'kv-0', to: 'kv-2', toId: '12' } });
    expect(moveLeaderDecision(healthy(), 'kv-9')).to.deep.equal({ refused: 'no member kv-9; the members are kv-0, kv-1, kv-2' });
    expect(moveLeaderDecision(healthy(), 'kv-0')).to.deep.equal({ refused: 'kv-0 already leads; nothing to move' });
    const down = healthy({ members: [member(0), member(1, { healthy: false }), member(2)] });
    expect((moveLeaderDecision(down) as { refused: string }).refused).to.match(/^not now: member kv-1 is not healthy/);
    expect((moveLeaderDecision(healthy({ catchUp: { leaderIndex: 5000, ratePerSecond: 0 } })) as { refused: string }).refused).to.match(/catching up/);
    expect((moveLeaderDecision(healthy({ suspended: true })) as { refused: string }).refused).to.match(/suspended .*resume it first.*move leadership from kv-0 to kv-1/);
  });

  it('restart: every member or the one named; an unknown member or a suspended cluster refused', () => {
    expect(restartDecision(healthy())).to.deep.equal({ members: ['kv-0', 'kv-1', 'kv-2'] });
    expect(restartDecision(healthy(), 'kv-1')).to.deep.equal({ members: ['kv-1'] });
    expect(restartDecision(healthy(), 'kv-7')).to.deep.equal({ refused: 'no member kv-7; the members are kv-0, kv-1, kv-2' });
    expect(restartDecision(healthy({ suspended: true }))).to.have.property('refused').that.matches(/suspended/);
  });

  it('alarm disarm: refused while the cause persists, naming it', () => {
    const members = ['kv-0', 'kv-1'];
    const MiB = 2 ** 20;
    const nospace = { alarms: [{ memberId: '10', alarm: 'NOSPACE' }], hashes: {}, quotaBytes: 10 * MiB, members };
    expect(disarmDecision({ ...nospace, dbSizes: { 'kv-0': 5 * MiB, 'kv-1': 12 * MiB }, dbSizesInUse: { 'kv-1': 11 * MiB } })).to.deep.equal({ refused: 'the NOSPACE alarm\'s cause persists: the database of kv-1 is 12.0 MiB (11.0 MiB in use) against a quota of 10.0 MiB; disarmed now, the next write raises it again. Compact and defragment first (the operator does so by itself), raise spec.maintenance.quotaBackendBytes, or grow spec.storage.size' });
    // the same rule as the operator's own relief: under the quota but above its 90% headroom is refused too
    expect(disarmDecision({ ...nospace, dbSizes: { 'kv-0': 5 * MiB, 'kv-1': 9.5 * MiB } })).to.have.property('refused').that.matches(/kv-1 is 9\.5 MiB \(\? in use\)/);
    expect(disarmDecision({ ...nospace, dbSizes: { 'kv-0': 5 * MiB } })).to.deep.equal({ refused: 'the NOSPACE alarm\'s cause may persist: kv-1 did not report its database size; disarm once every member answers' });
    expect(disarmDecision({ ...nospace, dbSizes: { 'kv-0': 5 * MiB, 'kv-1': 8 * MiB } })).to.deep.equal({ disarm: [{ memberId: '10', alarm: 'NOSPACE' }] });
    const corrupt = { alarms: [{ memberId: '0', alarm: 'CORRUPT' }], dbSizes: {}, quotaBytes: 1000, members };
    expect((disarmDecision({ ...corrupt, hashes: { 'kv-0': 1, 'kv-1': 2 } }) as { refused: string }).refused).to.match(/KV hashes differ \(kv-0 1, kv-1 2\)/);
    expect((disarmDecision({ ...corrupt, hashes: { 'kv-0': 1 } }) as { refused: string }).refused).to.match(/no KV hash from kv-1/);
    expect(disarmDecision({ ...corrupt, hashes: { 'kv-0': 1, 'kv-1': 1 } })).to.deep.equal({ disarm: [{ memberId: '0', alarm: 'CORRUPT' }] });
    expect(disarmDecision({ ...corrupt, alarms: [], hashes: {} })).to.deep.equal({ refused: 'no alarm is raised; nothing to disarm' });
  });
});

describe('operator/cli: parseArgs (node:util)', () => {
  const spec = { string: ['file', 'state-dir', 'output', 'namespace'], boolean: ['dry-run', 'watch'] };
  it('words and flags in every form the commands took before', () => {
    const a = parseArgs(['local', 'apply', '-f', 'x.yaml', '--state-dir=/tmp/s', '-o', 'json', '--dry-run', '-n', 'ns', '-w'], spec);
    expect(a.words).to.deep.equal(['local', 'apply']);
    expect(Object.fromEntries(a.flags)).to.deep.equal({ file: 'x.yaml', 'state-dir': '/tmp/s', output: 'json', 'dry-run': 'true', namespace: 'ns', watch: 'true' });
    expect(parseArgs(['--help'], {}).flags.get('help')).to.equal('true');
  });
  it('an unknown flag, a missing value and a value on a bare flag are usage errors naming the flag', () => {
    const fails = (argv: string[]) => {
      try {
        parseArgs(argv, spec);
      } catch (e) {
        expect(e).to.be.instanceOf(UsageError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(fails(['--bogus'])).to.equal('unknown flag --bogus');
    expect(fails(['-x'])).to.equal('unknown flag -x');
    expect(fails(['--file'])).to.equal('flag --file needs a value');
    expect(fails(['-f'])).to.equal('flag --file needs a value');
    expect(fails(['--dry-run=yes'])).to.equal('flag --dry-run takes no value');
  });
});

describe('operator: kubectl svc restart on Kubernetes (the svc.dev/restart-request annotation)', () => {
  it('the annotation is the RestartRequest as JSON; anything else is ignored', () => {
    const r = { token: '2026-11-27T12:00:00.000Z', members: ['kv-0', 'kv-2'] };
    expect(parseRestartRequest(JSON.stringify(r))).to.deep.equal(r);
    for (const bad of [undefined, '', 'restart please', '{"token":"","members":["kv-0"]}', '{"token":"t"}', '{"token":"t","members":[1]}']) expect(parseRestartRequest(bad), String(bad)).to.equal(undefined);
  });

  it('every request annotation is read into its field of the requests; malformed ones and a reconcile other than suspended ask nothing', () => {
    const restart = { token: 'r1', members: ['kv-1'] };
    const maintenance = { token: 'm1', action: 'move-leader', member: 'kv-2' };
    expect(requestsOf({
      'svc.dev/backup-request': 'b1', 'svc.dev/verify-request': 'v1', 'svc.dev/recover': 'c1', 'svc.dev/reconcile': 'suspended',
      'svc.dev/restart-request': JSON.stringify(restart), 'svc.dev/maintenance-request': JSON.stringify(maintenance), 'svc.dev/other': 'x',
    })).to.deep.equal({ backup: 'b1', verify: 'v1', recover: 'c1', suspended: true, restart, maintenance });
    expect(requestsOf({ 'svc.dev/reconcile': 'running', 'svc.dev/restart-request': 'now', 'svc.dev/maintenance-request': '{"token":"t","action":"shrink"}' })).to.deep.equal({});
  });

  it('the pod template carries the token (svc.dev/restart-token), so a pod started after the request answers it and one before does not', () => {
    const cluster = { name: 'kv', namespace: 'ns', uid: 'u', spec: spec() };
    const template = (live: { restart?: string }) => (ownedObjects(cluster, V, live).find((o) => o.kind === 'StatefulSet') as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata.annotations;
    expect(template({})).to.not.have.property(RESTART_TOKEN_ANNOTATION);
    expect(template({ restart: 't1' })[RESTART_TOKEN_ANNOTATION]).to.equal('t1');
    // the planner: a member named whose pod has another token (or none) is restarted once, reason RestartRequested
    const want = { config: 'c1', restart: { token: 't1', members: ['kv-1'] } };
    expect(restartReason(member(1), want)).to.equal('RestartRequested');
    expect(restartReason(member(1, { restartToken: 't1' }), want)).to.equal(undefined);
    expect(restartReason(member(2), want), 'a member not named').to.equal(undefined);
    expect(plan(spec(), healthy({ revision: want }), undefined)).to.deep.include({ kind: 'restartMember', member: 'kv-1', reason: 'RestartRequested' });
  });
});
