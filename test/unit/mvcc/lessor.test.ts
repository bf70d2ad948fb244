import { expect } from 'chai';
import type { Backend } from '../../../server/storage/backend.js';
import { MvccStore } from '../../../server/mvcc/kvstore.js';
import { Lessor, minLeaseTtlFor } from '../../../server/mvcc/lessor.js';
import { MvccError } from '../../../server/mvcc/errors.js';
import { b, backendIn, s, tempDir } from './helpers.js';

describe('lessor', () => {
  let t: ReturnType<typeof tempDir>;
  let be: Backend;
  let now: number;
  let le: Lessor;
  let st: MvccStore;
  const open = () => {
    be = backendIn(t.dir, { batchIntervalMs: 0 });
    le = new Lessor(be, { clock: () => now, minTtl: 2 });
    st = new MvccStore(be, { lessor: le });
  };
  beforeEach(() => {
    t = tempDir();
    now = 1_000_000;
    open();
  });
  afterEach(() => {
    be.close();
    t.cleanup();
  });

  it('grants with a minimum TTL and refuses duplicates and huge TTLs', () => {
    expect(minLeaseTtlFor(1000)).to.equal(2);
    expect(le.grant(1n, 1).ttl).to.equal(2);
    expect(le.grant(2n, 60).ttl).to.equal(60);
    expect(() => le.grant(1n, 10)).to.throw(MvccError, 'lease already exists');
    expect(() => le.grant(3n, 9_000_000_001)).to.throw(MvccError, 'too large lease TTL');
    expect(le.leases().map((l) => l.id)).to.deep.equal([1n, 2n]);
  });

  it('attaches keys on put, detaches on overwrite and delete; revoke deletes attached keys in one revision', () => {
    le.grant(7n, 30);
    le.grant(8n, 30);
    st.put(b('a'), b('1'), 7n);
    st.put(b('b'), b('1'), 7n);
    st.put(b('c'), b('1'), 7n);
    st.put(b('c'), b('2'), 8n); // moves c to lease 8
    st.deleteRange(b('b'));
    expect(le.timeToLive(7n, true).keys!.map(s)).to.deep.equal(['a']);
    expect(le.timeToLive(8n, true).keys!.map(s)).to.deep.equal(['c']);
    expect(() => st.put(b('x'), b('1'), 99n)).to.throw(MvccError, 'lease not found');
    const rev = st.rev();
    st.put(b('d'), b('1'), 8n);
    le.revoke(8n);
    expect(st.rev()).to.equal(rev + 2);
    expect(st.range(b('c')).kvs).to.deep.equal([]);
    expect(st.range(b('d')).kvs).to.deep.equal([]);
    expect(st.range(b('a')).kvs).to.have.length(1);
    expect(le.lookup(8n)).to.equal(undefined);
    expect(() => le.revoke(8n)).to.throw(MvccError, 'lease not found');
  });

  it('expiry with a fake clock, only on the primary; renew extends; promote refreshes', () => {
    le.grant(1n, 10);
    le.grant(2n, 20);
    expect(le.expired(now + 60_000)).to.deep.equal([]); // not primary: never expires
    expect(() => le.renew(1n)).to.throw(MvccError, 'not a primary lessor');
    expect(le.timeToLive(1n).ttl).to.equal(-1);
    le.promote(0);
    expect(le.timeToLive(1n).ttl).to.equal(10);
    now += 9_000;
    expect(le.expired(now)).to.deep.equal([]);
    expect(le.renew(1n)).to.equal(10);
    now += 5_000;
    expect(le.timeToLive(1n)).to.deep.include({ ttl: 5, grantedTtl: 10 });
    now += 5_500; // lease 1 (renewed at +9s) expired at +19s, lease 2 expires at +20s
    expect(le.expired(now)).to.deep.equal([1n]);
    expect(le.expired(now)).to.deep.equal([]); // reported once, retried only after the interval
    now += 1_000;
    expect(le.expired(now)).to.deep.equal([2n]);
    now += 2_500; // lease 1 was reported 3.5 s ago, lease 2 only 2.5 s ago
    expect(le.expired(now)).to.deep.equal([1n]);
    expect(() => le.renew(1n)).to.throw(MvccError, 'lease not found');
    le.demote();
    expect(le.expired(now + 1e9)).to.deep.equal([]);
    le.promote(1_500);
    expect(le.expired(now + 11_000)).to.deep.equal([]);
    expect(le.expired(now + 11_500)).to.deep.equal([1n]);
    expect(le.expired(now + 21_500)).to.deep.equal([1n, 2n]); // 1 again: its revoke never came
  });

  it('a checkpointed remaining TTL survives reopen and is used on promotion until renewed', () => {
    le.grant(9n, 60);
    le.checkpoint(9n, 5);
    be.close();
    open();
    expect(le.lookup(9n)).to.deep.include({ ttl: 60, remainingTtl: 5 });
    le.promote(0);
    expect(le.timeToLive(9n).ttl).to.equal(5);
    expect(le.renew(9n)).to.equal(60);
    expect(le.lookup(9n)!.remainingTtl).to.equal(0);
    expect(le.timeToLive(9n).ttl).to.equal(60);
  });

  it('recovers leases and attachments after reopen', () => {
    le.grant(5n, 100);
    le.grant(6n, 100);
    st.put(b('k1'), b('v'), 5n);
    st.put(b('k2'), b('v'), 5n);
    st.put(b('k3'), b('v'), 6n);
    st.put(b('k3'), b('v2')); // no lease any more
    le.revoke(6n);
    be.close();
    open();
    expect(le.leases().map((l) => [l.id, l.ttl])).to.deep.equal([[5n, 100]]);
    expect(le.lookup(5n)!.keys.map(s)).to.deep.equal(['k1', 'k2']);
    expect(st.range(b('k3')).kvs[0].lease).to.equal(0n);
    le.promote(0);
    now += 101_000;
    expect(le.expired(now)).to.deep.equal([5n]);
    le.revoke(5n);
    expect(st.range(b('k'), b('l')).kvs.map((kv) => s(kv.key))).to.deep.equal(['k3']);
  });
});
