// The record document's pure functions (planner/records.ts) and the local state file's move to it: what a pass records
// from its observation, before its step and after it; an unchanged document is the same object (no write); a state
// file of an earlier release keeps everything it recorded and asked for.
import { expect } from 'chai';
import { withDefaults } from '../../../operator/api/validate.js';
import { noteObserved, observeRecords, recordAfter, recordBefore } from '../../../operator/planner/records.js';
import type { ObservedCluster, ObservedMember } from '../../../operator/planner/types.js';
import { migrateState, type LocalState } from '../../../operator/runtime/local/state.js';

const spec = withDefaults({ version: '3.5.21', replicas: 3 });
const member = (name: string, over: Partial<ObservedMember> = {}): ObservedMember =>
  ({ name, configuredVersion: '3.5.21', running: true, release: '3.5.21', clusterVersion: '3.5.0', healthy: true, leader: name === 'kv-0', ...over });
const observed = (over: Partial<ObservedCluster> = {}): ObservedCluster => ({ now: 1000, members: [member('kv-0'), member('kv-1'), member('kv-2')], ...over });

describe('operator: the record document', () => {
  it('an observation that changes nothing leaves the same object (the engine writes nothing)', () => {
    const r = { formed: 'T' };
    expect(noteObserved(r, observed())).to.equal(r);
    expect(recordBefore(r, { kind: 'wait', code: 'CatchingUp', reason: 'x' }, observed(), spec)).to.equal(r);
    expect(recordAfter(r, { kind: 'restartMember', member: 'kv-1', version: '3.5.21' }, { now: 2 }, spec, { name: 'kv', created: 0 })).to.equal(r);
  });

  it('the cluster formed once every member ran and answered at once, and stays formed', () => {
    const down = observed({ members: [member('kv-0'), member('kv-1', { running: false, healthy: false }), member('kv-2')] });
    expect(noteObserved({}, down)).to.deep.equal({});
    const formed = noteObserved({}, observed());
    expect(formed).to.deep.equal({ formed: new Date(1000).toISOString() });
    expect(noteObserved(formed, down)).to.equal(formed);
  });

  it('a scaling step is recorded before it acts; looked at again it keeps its start; the join list carries over', () => {
    const add = recordBefore({}, { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] }, observed(), { ...spec, replicas: 4 });
    expect(add.scaling).to.deep.equal({ replicas: 4, step: 'addMember', member: 'kv-3', startedAt: new Date(1000).toISOString(), join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] });
    expect(recordBefore(add, { kind: 'addMember', member: 'kv-3', join: ['kv-0', 'kv-1', 'kv-2', 'kv-3'] }, observed({ now: 5000 }), { ...spec, replicas: 4 })).to.equal(add);
    const retire = recordBefore(add, { kind: 'retireMember', member: 'kv-3' }, observed({ now: 6000 }), spec);
    expect(retire.scaling).to.include({ replicas: 3, step: 'retireMember', member: 'kv-3' });
    expect(retire.scaling!.join).to.deep.equal(['kv-0', 'kv-1', 'kv-2', 'kv-3']);
  });

  it('hibernation: the member count recorded before the members stop, cleared after they woke', () => {
    const slept = recordBefore({}, { kind: 'hibernate', members: ['kv-0', 'kv-1', 'kv-2'] }, observed(), { ...spec, replicas: 0 });
    expect(slept.hibernated).to.equal(3);
    const o = observed();
    observeRecords(o, { records: slept, requests: {}, version: '1', cluster: { name: 'kv', created: 0 } });
    expect(o.hibernated).to.equal(true);
    expect(recordAfter(slept, { kind: 'wake', members: ['kv-0', 'kv-1', 'kv-2'] }, { now: 2 }, spec, { name: 'kv', created: 0 })).to.deep.equal({});
  });

  it('a backup is recorded after it was taken (the slot answered), with retention; requests reach the observation', () => {
    const taken = { kind: 'on-demand' as const, location: '/b/kv-0.db', member: 'kv-0', revision: 5, size: 1, sha256: 'a'.repeat(64), time: new Date(0).toISOString() };
    const r = recordAfter({}, { kind: 'backup', reason: 'OnDemand', member: 'kv-0', id: 'tok' }, { now: 2, backup: taken }, spec, { name: 'kv', created: 0, backupsAt: '/b' });
    expect(r.backups).to.deep.include({ claim: '/b', lastRequest: 'tok', items: [taken] });
    const o = observed();
    observeRecords(o, { records: r, requests: { backup: 'tok2', suspended: true, recover: 'rt' }, version: '1', cluster: { name: 'kv', created: 7 } });
    expect(o.backups).to.deep.include({ request: 'tok2', created: 7, verifies: true });
    expect(o.suspended).to.equal(true);
    expect(o.recovery).to.deep.equal({ request: 'rt' });
  });

  it('a state file of an earlier release: its records and requests move into the document, nothing lost', () => {
    const old = {
      name: 'kv', spec, token: 't', createdAt: new Date(0).toISOString(), members: [{ name: 'kv-0' }, { name: 'kv-1' }],
      progress: { from: '3.4.34', to: '3.5.21', step: 'complete', startedAt: 1, restarts: {}, membersDone: [] }, hibernated: true,
      backups: { claim: '/b', lastRequest: 'r0' }, backupRequest: 'r1', suspended: true, restartRequest: { token: 'x', members: ['kv-0'] }, lastStep: 'steady',
    } as unknown as LocalState;
    const s = migrateState(old) as LocalState & Record<string, unknown>;
    expect(s.records).to.deep.equal({ progress: (old as unknown as { progress: unknown }).progress, hibernated: 2, backups: { claim: '/b', lastRequest: 'r0' } });
    expect(s.requests).to.deep.equal({ backup: 'r1', suspended: true, restart: { token: 'x', members: ['kv-0'] } });
    expect(s.recordsVersion).to.equal(0);
    expect(s.lastStep).to.equal('steady');
    for (const k of ['progress', 'hibernated', 'backups', 'backupRequest', 'suspended', 'restartRequest']) expect(s, k).to.not.have.property(k);
    expect(migrateState(s)).to.equal(s);
  });
});
