// The CORRUPT alarm in the planner, pure: the observation's hashes decide (observe.ts majorityHash); the member whose
// hash differs from a strict majority's is replaced, the alarm is disarmed once every hash agrees, and with no
// majority a person decides; nothing else (no upgrade, no scaling) happens while the alarm is raised.
import { expect } from 'chai';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { majorityHash } from '../../../operator/orchestrator/observe.js';
import { plan } from '../../../operator/planner/plan.js';
import type { CorruptionObservation, ObservedCluster, ObservedMember } from '../../../operator/planner/types.js';

const V = '3.5.21';
const spec = (over: Partial<SvcClusterSpec> = {}): SvcClusterSpec => withDefaults({ version: V, replicas: 3, ...over });
const member = (i: number, over: Partial<ObservedMember> = {}): ObservedMember =>
  ({ name: `kv-${i}`, id: String(100 + i), configuredVersion: V, release: V, clusterVersion: '3.5.0', running: true, healthy: true, leader: i === 0, appliedIndex: 500, revision: 40, ...over });
const cluster = (members: ObservedMember[], corruption?: CorruptionObservation): ObservedCluster => ({
  now: 5_000, members, authEnabled: false, clusterMembersByLeader: true, catchUp: { leaderIndex: 500, ratePerSecond: 0 },
  clusterMembers: members.map((m, i) => ({ id: String(100 + i), member: m.name, started: true })),
  ...(corruption ? { corruption } : {}),
});
const hashes = (...hs: number[]): CorruptionObservation['hashes'] => Object.fromEntries(hs.map((hash, i) => [`kv-${i}`, { hash, compactRevision: -1 }]));

describe('operator planner: the CORRUPT alarm', () => {
  it('majorityHash: the hash of a strict majority at the same compaction revision, else none', () => {
    expect(majorityHash(hashes(7, 7, 9), 3)).to.equal(7);
    expect(majorityHash(hashes(7, 8, 9), 3)).to.equal(undefined);
    expect(majorityHash(hashes(7, 9), 3), 'one of three answered with each').to.equal(undefined);
    expect(majorityHash({ a: { hash: 7, compactRevision: 5 }, b: { hash: 7, compactRevision: 6 }, c: { hash: 9, compactRevision: 5 } }, 3), 'other compactions are not comparable').to.equal(undefined);
    expect(majorityHash(hashes(7, 7, 9, 9), 4), 'a tie is no majority').to.equal(undefined);
  });

  it('the member whose hash differs (lost, DataCorrupt, as observe marks it) is replaced first', () => {
    const lost = { cause: 'DataCorrupt' as const, detail: 'the CORRUPT alarm is raised and its KV hash at revision 40 is 9, where 2 of 3 members have 7' };
    const step = plan(spec(), cluster([member(0), member(1), member(2, { lost })], { alarmMemberId: '0', revision: 40, hashes: hashes(7, 7, 9), majority: 7 }), undefined);
    expect(step).to.include({ kind: 'replaceMember', member: 'kv-2', id: '102', cause: 'DataCorrupt' });
  });

  it('once every hash agrees, the alarm is disarmed through the leader (for the member ID it was raised for)', () => {
    const step = plan(spec(), cluster([member(0), member(1), member(2)], { alarmMemberId: '0', revision: 40, hashes: hashes(7, 7, 7), majority: 7 }), undefined);
    expect(step).to.deep.equal({ kind: 'disarmAlarm', member: 'kv-0', alarm: 'CORRUPT', memberId: '0' });
  });

  it('no strict majority: a wait that says why and what a person does; nothing else is planned while the alarm is raised', () => {
    const undecided = plan(spec(), cluster([member(0), member(1), member(2)], { alarmMemberId: '0', revision: 40, hashes: hashes(7, 8, 9) }), undefined);
    expect(undecided).to.include({ kind: 'wait', code: 'CorruptionUndecided' });
    expect((undecided as { reason: string }).reason).to.match(/no strict majority .* revision 40 \(kv-0 7, kv-1 8, kv-2 9\).*etcdctl alarm disarm/);
    // a new release asked for meanwhile waits too (an upgrade of a cluster that refuses writes is not begun)
    const upgrade = plan(spec({ version: '3.5.21' }), cluster([member(0, { release: '3.4.34', configuredVersion: '3.4.34', clusterVersion: '3.4.0' }), member(1, { release: '3.4.34', configuredVersion: '3.4.34', clusterVersion: '3.4.0' }), member(2, { release: '3.4.34', configuredVersion: '3.4.34', clusterVersion: '3.4.0' })], { alarmMemberId: '0', revision: 40, hashes: hashes(7, 7, 8), majority: 7 }), undefined);
    expect(upgrade).to.include({ kind: 'wait', code: 'CorruptionUndecided' });
  });
});
