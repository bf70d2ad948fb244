import { expect } from 'chai';
import type { Backend } from '../../../server/storage/backend.js';
import { MvccStore } from '../../../server/mvcc/kvstore.js';
import { WatchableStore, type WatchResponse } from '../../../server/mvcc/watchable-store.js';
import { MvccError } from '../../../server/mvcc/errors.js';
import { b, openStore, s, tempDir } from './helpers.js';

function summary(rs: WatchResponse[]): string[] {
  return rs.flatMap((r) => r.events.map((e) => `${e.type} ${s(e.kv.key)}@${e.kv.modRevision}${e.type === 'PUT' ? '=' + s(e.kv.value) : ''}`));
}

describe('watchable store', () => {
  let t: ReturnType<typeof tempDir>;
  let be: Backend;
  let st: MvccStore;
  let ws: WatchableStore;
  beforeEach(() => {
    t = tempDir();
    ({ be, st } = openStore(t.dir));
    ws = new WatchableStore(st, { autoSync: false, chunkSize: 5 });
  });
  afterEach(() => {
    ws.close();
    be.close();
    t.cleanup();
  });

  it('synced watcher gets new changes of its key, one response per txn', () => {
    const got: WatchResponse[] = [];
    const w = ws.watch(b('foo'), undefined, 0, {}, (r) => {
      got.push(r);
    });
    expect(w.state).to.equal('synced');
    st.put(b('foo'), b('1'));
    st.put(b('bar'), b('x'));
    const tw = st.write();
    tw.put(b('foo'), b('2'));
    tw.deleteRange(b('foo'));
    tw.end();
    expect(summary(got)).to.deep.equal(['PUT foo@2=1', 'PUT foo@4=2', 'DELETE foo@4']);
    expect(got.map((r) => r.revision)).to.deep.equal([2, 4]);
    expect(got[0].watchId).to.equal(w.id);
  });

  it('prefix and from-key watchers, with filters', () => {
    const pre: WatchResponse[] = [];
    const from: WatchResponse[] = [];
    const noPut: WatchResponse[] = [];
    ws.watch(b('a/'), b('a0'), 0, {}, (r) => void pre.push(r));
    ws.watch(b('b'), b('\0'), 0, { filters: ['nodelete'] }, (r) => void from.push(r));
    ws.watch(b('a/'), b('a0'), 0, { filters: ['noput'] }, (r) => void noPut.push(r));
    st.put(b('a/1'), b('x'));
    st.put(b('a0'), b('x'));
    st.put(b('c'), b('y'));
    st.deleteRange(b('a/1'));
    st.deleteRange(b('c'));
    expect(summary(pre)).to.deep.equal(['PUT a/1@2=x', 'DELETE a/1@5']);
    expect(summary(from)).to.deep.equal(['PUT c@4=y']);
    expect(summary(noPut)).to.deep.equal(['DELETE a/1@5']);
  });

  it('prevKv only when asked', () => {
    const withPrev: WatchResponse[] = [];
    const without: WatchResponse[] = [];
    st.put(b('k'), b('old'));
    ws.watch(b('k'), undefined, 0, { prevKv: true }, (r) => void withPrev.push(r));
    ws.watch(b('k'), undefined, 0, {}, (r) => void without.push(r));
    st.put(b('k'), b('new'));
    st.deleteRange(b('k'));
    expect(withPrev.map((r) => s(r.events[0].prevKv!.value))).to.deep.equal(['old', 'new']);
    expect(without.every((r) => r.events[0].prevKv === undefined)).to.equal(true);
  });

  it('a put that did not read the previous kv: read for a watcher that asks for prev_kv only, and kept for the next', () => {
    const withPrev: WatchResponse[] = [];
    const withPrev2: WatchResponse[] = [];
    const without: WatchResponse[] = [];
    st.put(b('k'), b('old'), 0n);
    ws.watch(b('k'), undefined, 0, { prevKv: true }, (r) => void withPrev.push(r));
    ws.watch(b('k'), undefined, 0, {}, (r) => void without.push(r));
    ws.watch(b('k'), undefined, 0, { prevKv: true }, (r) => void withPrev2.push(r));
    const tw = st.write();
    expect(tw.put(b('k'), b('new'), 0n, false)).to.equal(undefined);
    expect(tw.put(b('x'), b('created'), 0n, false)).to.equal(undefined);
    tw.end();
    const ev = withPrev[0].events[0];
    expect(s(ev.prevKv!.value)).to.equal('old');
    expect(ev.prevKv).to.deep.include({ createRevision: 2, modRevision: 2, version: 1, lease: 0n });
    expect(withPrev2[0].events[0].prevKv).to.equal(ev.prevKv);
    expect(without[0].events[0].prevKv).to.equal(undefined);
    expect(st.range(b('k')).kvs[0]).to.deep.include({ createRevision: 2, modRevision: 3, version: 2 });
  });

  it('catches up from a past revision in bounded chunks, then continues synced', () => {
    for (let i = 0; i < 12; i++) st.put(b(`k${i % 3}`), b(`v${i}`)); // revs 2..13
    st.deleteRange(b('k1')); // 14
    const got: WatchResponse[] = [];
    const w = ws.watch(b('k'), b('l'), 3, { prevKv: true }, (r) => void got.push(r));
    expect(w.state).to.equal('unsynced');
    let passes = 0;
    while (ws.syncWatchers() > 0) passes++;
    expect(passes).to.be.greaterThan(0);
    expect(w.state).to.equal('synced');
    const evs = got.flatMap((r) => r.events);
    expect(evs.map((e) => e.kv.modRevision)).to.deep.equal([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(evs[evs.length - 1].type).to.equal('DELETE');
    // prevKv filled from history for non-create events
    expect(s(evs[2].prevKv!.value)).to.equal('v0'); // k0 at 5, previously v0 at 2
    expect(s(evs[3].prevKv!.value)).to.equal('v1');
    expect(evs[0].prevKv).to.equal(undefined); // k1 created at 3
    st.put(b('k9'), b('live'));
    expect(summary(got).slice(-1)).to.deep.equal(['PUT k9@15=live']);
  });

  it('a watcher starting at or after a compaction catches up; before it gets compacted and is dropped', () => {
    for (let i = 0; i < 10; i++) st.put(b('x'), b(`v${i}`)); // 2..11
    st.compact(6);
    const old: WatchResponse[] = [];
    const atCompact: WatchResponse[] = [];
    const wOld = ws.watch(b('x'), undefined, 3, {}, (r) => void old.push(r));
    ws.watch(b('x'), undefined, 6, {}, (r) => void atCompact.push(r));
    while (ws.syncWatchers() > 0);
    expect(old).to.have.length(1);
    expect(old[0].compactRevision).to.equal(6);
    expect(old[0].events).to.deep.equal([]);
    expect(wOld.state).to.equal('compacted');
    st.put(b('x'), b('after'));
    expect(old).to.have.length(1);
    expect(atCompact.flatMap((r) => r.events).map((e) => e.kv.modRevision)).to.deep.equal([6, 7, 8, 9, 10, 11, 12]);
  });

  it('cancel stops delivery; progress only for synced watchers', () => {
    const got: WatchResponse[] = [];
    const w = ws.watch(b('k'), undefined, 0, { progressNotify: true }, (r) => void got.push(r));
    st.put(b('k'), b('1'));
    expect(w.requestProgress()).to.equal(true);
    ws.progressNotifyAll();
    expect(got.slice(1).map((r) => [r.events.length, r.revision])).to.deep.equal([
      [0, 2],
      [0, 2],
    ]);
    w.cancel();
    st.put(b('k'), b('2'));
    expect(got).to.have.length(3);
    expect(w.state).to.equal('canceled');
    st.put(b('k'), b('3'));
    const past = ws.watch(b('k'), undefined, 2, {}, () => {});
    expect(past.requestProgress()).to.equal(false);
    expect(ws.stats.unsynced).to.equal(1);
    expect(() => ws.watch(b('b'), b('a'), 0, {}, () => {})).to.throw(MvccError);
  });

  it('a consumer may cancel its watcher from inside the sink', () => {
    for (let i = 0; i < 3; i++) st.put(b('k'), b(`${i}`));
    const got: WatchResponse[] = [];
    const w = ws.watch(b('k'), undefined, 2, {}, (r) => {
      got.push(r);
      w.cancel();
    });
    while (ws.syncWatchers() > 0);
    st.put(b('k'), b('later'));
    expect(got).to.have.length(1);
    expect(w.state).to.equal('canceled');
    expect(ws.stats.watchers).to.equal(0);
  });

  it('a slow consumer becomes a victim and gets the same events later, in order', () => {
    const got: WatchResponse[] = [];
    let accept = false;
    const w = ws.watch(b('k'), undefined, 0, {}, (r) => {
      if (!accept) return false;
      got.push(r);
      return true;
    });
    st.put(b('k'), b('1'));
    expect(w.state).to.equal('victim');
    st.put(b('k'), b('2'));
    st.put(b('k'), b('3'));
    accept = true;
    ws.syncVictims();
    while (ws.syncWatchers() > 0);
    expect(summary(got)).to.deep.equal(['PUT k@2=1', 'PUT k@3=2', 'PUT k@4=3']);
    expect(w.state).to.equal('synced');
  });

  it('restore from another backend makes synced watchers catch up on the new data', () => {
    const got: WatchResponse[] = [];
    ws.watch(b('k'), b('l'), 0, {}, (r) => void got.push(r));
    st.put(b('k1'), b('mine')); // 2
    const t2 = tempDir();
    const { be: other, st: st2 } = openStore(t2.dir);
    try {
      st2.put(b('x'), b('1')); // 2
      st2.put(b('k2'), b('theirs')); // 3
      st2.put(b('k3'), b('theirs')); // 4
      ws.restore(other);
      expect(st.rev()).to.equal(4);
      while (ws.syncWatchers() > 0);
      expect(summary(got)).to.deep.equal(['PUT k1@2=mine', 'PUT k2@3=theirs', 'PUT k3@4=theirs']);
      expect(ws.stats).to.deep.include({ synced: 1, unsynced: 0 });
    } finally {
      ws.restore(be);
      other.close();
      t2.cleanup();
    }
  });

  it('with autoSync, a past watcher catches up on its own', async () => {
    const auto = new WatchableStore(st, { chunkSize: 3 });
    try {
      for (let i = 0; i < 20; i++) st.put(b('a'), b(`${i}`));
      const got: WatchResponse[] = [];
      auto.watch(b('a'), undefined, 1, {}, (r) => void got.push(r));
      for (let i = 0; i < 100 && got.flatMap((r) => r.events).length < 20; i++) await new Promise((r) => setImmediate(r));
      expect(got.flatMap((r) => r.events).map((e) => s(e.kv.value))).to.deep.equal([...Array(20).keys()].map(String));
    } finally {
      auto.close();
    }
  });
});
