// Property tests of the pure upgrade planner, over generated observations and over simulated upgrades
// with crashes of the orchestrator at every step and members falling ill on the way.
import { expect } from 'chai';
import fc from 'fast-check';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { plan, recordSnapshot, type ObservedCluster, type ObservedMember, type Step, type UpgradeProgress } from '../../../operator/planner/index.js';
import { driveToSteady, Sim, type Crash } from './sim.js';
import { upgradePath } from '../../../operator/planner/upgrade-path.js';

const RELEASES = ['3.3.27', '3.4.34', '3.5.21', '3.4.33', '3.3.26'];
const spec = (version: string, extra: Partial<SvcClusterSpec> = {}): SvcClusterSpec => withDefaults({ version, replicas: 3, ...extra });
const minorIdx = (v: string) => Number(v.split('.')[1]) - 3;

const arbMember = (i: number) =>
  fc.record({
    configuredVersion: fc.constantFrom(...RELEASES),
    release: fc.option(fc.constantFrom(...RELEASES), { nil: undefined }),
    running: fc.boolean(),
    healthy: fc.boolean(),
    leader: fc.boolean(),
    appliedIndex: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    failure: fc.option(fc.constant('exited with code 1'), { nil: undefined }),
    cv: fc.option(fc.constantFrom('3.3.0', '3.4.0', '3.5.0', 'not_decided'), { nil: undefined }),
  }).map((r): ObservedMember => ({
    name: `m${i}`,
    id: String(100 + i),
    configuredVersion: r.configuredVersion,
    release: r.release,
    running: r.running,
    healthy: r.healthy && r.running,
    leader: r.leader && r.running,
    appliedIndex: r.appliedIndex,
    failure: r.running ? undefined : r.failure,
    clusterVersion: r.cv,
  }));

const arbObserved: fc.Arbitrary<ObservedCluster> = fc
  .integer({ min: 1, max: 5 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbMember(i))))
  .chain((members) =>
    fc.record({ auth: fc.option(fc.boolean(), { nil: undefined }), v2: fc.option(fc.integer({ min: 0, max: 200 * 1048576 }), { nil: undefined }) }).map(
      (x): ObservedCluster => ({ now: 5_000_000, members, authEnabled: x.auth, v2DataBytes: x.v2 }),
    ),
  );

const arbProgress = (to: string): fc.Arbitrary<UpgradeProgress | undefined> =>
  fc.option(
    fc.record({ snap: fc.boolean(), done: fc.subarray(['m0', 'm1', 'm2']), last: fc.integer({ min: 0, max: 5_000_000 }) }).map(
      (x): UpgradeProgress => ({
        from: '3.3.27',
        to,
        step: 'restartMember',
        startedAt: 1,
        restarts: x.last > 0 ? { m0: x.last } : {},
        membersDone: x.done,
        snapshot: x.snap ? { location: '/s', member: 'm0', revision: 1, size: 1, sha256: 'x', time: 't' } : undefined,
      }),
    ),
    { nil: undefined },
  );

const disruptive = (s: Step) => s.kind === 'restartMember' || s.kind === 'moveLeader' || s.kind === 'snapshot';

describe('operator/upgrade planner (properties over generated observations)', () => {
  it('never plans a disruptive step unless every member is running, healthy, caught up, with exactly one leader', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RELEASES), arbObserved, fc.boolean(), (target, o, paused) => {
        const step = plan(spec(target, { upgrade: { paused } }), o, undefined);
        if (disruptive(step)) {
          expect(paused).to.equal(false);
          // The one exception: a member that is not running at all is started on the target.
          const down = o.members.filter((m) => !m.running || !m.healthy);
          if (step.kind === 'restartMember' && down.length === 1 && down[0].name === step.member) expect(down[0].running).to.equal(false);
          else expect(down).to.deep.equal([]);
          expect(o.members.filter((m) => m.leader)).to.have.length(1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('restarts the leader only when it is the sole member, and moves leadership only once every follower is on the target', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RELEASES), arbObserved, arbProgress('3.4.34'), (target, o, p) => {
        const step = plan(spec(target), o, p && { ...p, to: target });
        if (step.kind === 'restartMember') {
          const m = o.members.find((x) => x.name === step.member)!;
          if (m.leader) expect(o.members).to.have.length(1);
        }
        if (step.kind === 'moveLeader') {
          const onTarget = (m: ObservedMember) => m.release === target && m.configuredVersion === target;
          expect(o.members.find((m) => m.name === step.from)!.leader).to.equal(true);
          expect(onTarget(o.members.find((m) => m.name === step.to)!)).to.equal(true);
          expect(o.members.filter((m) => !m.leader).every(onTarget)).to.equal(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent and independent of member order', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RELEASES), arbObserved, arbProgress('3.4.34'), (target, o, p) => {
        const s = spec(target);
        const a = plan(s, o, p);
        expect(plan(s, structuredClone(o), structuredClone(p))).to.deep.equal(a);
        expect(plan(s, { ...o, members: [...o.members].reverse() }, p)).to.deep.equal(a);
      }),
      { numRuns: 1000 },
    );
  });

  it('takes a target two minors away hop by hop; refuses downgrade after completion and auth-enabled upgrades to 3.5 before touching anything', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RELEASES), fc.constantFrom(...RELEASES), fc.integer({ min: 1, max: 5 }), fc.boolean(), (from, to, n, auth) => {
        const sim = new Sim(n, from);
        sim.auth = auth;
        const step = plan(spec(to, { replicas: n }), sim.observe(), undefined);
        const d = minorIdx(to) - minorIdx(from);
        if (d >= 2 && auth) expect(step).to.include({ kind: 'blocked', code: 'AuthEnabledUpgradeTo35' });
        else if (d >= 2) expect(step).to.deep.include({ kind: 'snapshot', to: upgradePath(from, to)[0], hops: upgradePath(from, to) });
        else if (d < 0) expect(step).to.include({ kind: 'blocked', code: 'DowngradeAfterCompletion' });
        else if (d === 1 && to.startsWith('3.5') && auth) expect(step).to.include({ kind: 'blocked', code: 'AuthEnabledUpgradeTo35' });
        else if (from === to) expect(step.kind).to.equal('steady');
        else expect(step).to.include({ kind: 'snapshot' });
        if (step.kind === 'blocked') expect(step.condition).to.equal('UpgradeBlocked');
      }),
      { numRuns: 500 },
    );
  });

  it('allows a downgrade while a member still runs the older release', () => {
    const sim = new Sim(3, '3.3.27');
    sim.configure('m1', '3.4.34');
    sim.restart('m1');
    sim.tick();
    sim.tick();
    sim.tick();
    const step = plan(spec('3.3.27'), sim.observe(), undefined);
    expect(step).to.deep.equal({ kind: 'snapshot', member: 'm0', from: '3.4.34', to: '3.3.27' });
  });

  it('needs an acknowledgment for 100 MB of v2 data and waits 2 minutes between members above 50 MB', () => {
    const sim = new Sim(3, '3.3.27');
    sim.v2Bytes = 120 * 1048576;
    expect(plan(spec('3.4.34'), sim.observe(), undefined)).to.include({ kind: 'blocked', code: 'LargeV2DataNotAcknowledged' });
    expect(plan(spec('3.4.34', { upgrade: { acknowledgeLargeV2Data: true } }), sim.observe(), undefined)).to.include({ kind: 'snapshot' });
    sim.v2Bytes = 60 * 1048576;
    const p: UpgradeProgress = { from: '3.3.27', to: '3.4.34', step: 'restartMember', startedAt: 0, restarts: { m1: sim.now - 60_000 }, membersDone: [], snapshot: { location: 'x', member: 'm0', revision: 1, size: 1, sha256: 'x', time: 't' } };
    expect(plan(spec('3.4.34'), sim.observe(), p)).to.include({ kind: 'wait', code: 'WaitBetweenMembers' });
    sim.now += 61_000;
    expect(plan(spec('3.4.34'), sim.observe(), p).kind).to.equal('restartMember');
  });

  it('pauses before the next step when spec.upgrade.paused is set', () => {
    const sim = new Sim(3, '3.3.27');
    const step = plan(spec('3.4.34', { upgrade: { paused: true } }), sim.observe(), undefined);
    expect(step).to.include({ kind: 'wait', code: 'Paused' });
    expect((step as { reason: string }).reason).to.match(/next step: snapshot from m0/);
  });
});

/** Drives a simulated upgrade; `crashes` and `sick` say at which step numbers the orchestrator dies / a member falls ill. */
function runSimulated(opts: { n: number; from: string; to: string; leader: number; crashes: Map<number, Crash>; sick: Map<number, number> }) {
  const sim = new Sim(opts.n, opts.from, opts.leader);
  const snapshotsRecorded: number[] = [];
  let snapshotsTaken = 0;
  const order: string[] = [];
  const { kinds, stored } = driveToSteady(sim, spec(opts.to, { replicas: opts.n }), opts, 400, (step, t) => {
    switch (step.kind) {
      case 'snapshot':
        snapshotsTaken++;
        if (t.crash !== undefined) break;
        snapshotsRecorded.push(t.stepNo);
        return recordSnapshot(t.stored!, { location: `/snap/${t.stepNo}`, member: step.member, revision: 1, size: 1, sha256: 'x', time: 't' });
      case 'restartMember':
        sim.configure(step.member, step.version);
        if (t.crash !== 'mid') {
          sim.restart(step.member);
          order.push(step.member);
        }
        break;
      case 'moveLeader':
        sim.moveLeader(step.from, step.to);
        break;
      default:
        break;
    }
    return t.stored;
  });
  if (!kinds.includes('complete')) throw new Error('steady before complete');
  return { sim, snapshotsTaken, snapshotsRecorded, order, stored };
}

describe('operator/upgrade planner (simulated upgrades with crashes at every step)', () => {
  it('completes every upgrade, one member at a time, the leader last, without repeating or skipping a step', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 3, 5),
        fc.constantFrom<[string, string]>(['3.3.27', '3.4.34'], ['3.4.34', '3.5.21'], ['3.4.33', '3.4.34']),
        fc.nat(4),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 14 }), fc.constantFrom<'before' | 'mid' | 'after'>('before', 'mid', 'after')), { maxLength: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 14 }), fc.nat(4)), { maxLength: 3 }),
        (n, [from, to], leader, crashes, sick) => {
          const r = runSimulated({ n, from, to, leader, crashes: new Map(crashes), sick: new Map(sick) });
          expect(r.sim.violations).to.deep.equal([]);
          // Every member on the target, each started on it exactly once (never repeated, never skipped).
          for (const m of r.sim.members) {
            expect(m.release).to.equal(to);
            expect(m.starts[to]).to.equal(1, `${m.name} starts on ${to}`);
          }
          expect(r.sim.cv).to.equal(to.split('.').slice(0, 2).join('.'));
          // One verified snapshot recorded; none taken after it was recorded.
          expect(r.snapshotsRecorded).to.have.length(1);
          expect(r.stored?.finishedAt).to.be.a('number');
          // With the leader moved before its restart, a multi-member cluster sees exactly one leader change.
          if (n > 1) expect(r.sim.leaderChanges).to.equal(1);
        },
      ),
      { numRuns: 400 },
    );
  });
});
