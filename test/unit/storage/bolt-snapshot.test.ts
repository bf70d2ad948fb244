// The translation between svc's bucket values and the reference's (mvccpb.KeyValue, leasepb.Lease, authpb.User
// and Role, member records) used by snapshots in the reference's format, and its `snapshot status` checksum.
import { expect } from 'chai';
import fc from 'fast-check';
import { toReference, fromReference, memberJSON, crc32c } from '../../../server/cluster/bolt-snapshot.js';
import { encodeKv, decodeKv } from '../../../server/mvcc/kv.js';
import { revToBytes } from '../../../server/mvcc/revision.js';

describe('snapshot format: svc <-> reference values', () => {
  it('a key-value survives svc -> reference -> svc, and the reference bytes are mvccpb.KeyValue', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 50 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 10000 }),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        (key, value, create, dmod, version, lease) => {
          const kv = { key, value, createRevision: create, modRevision: create + dmod, version, lease };
          const rk = revToBytes({ main: kv.modRevision, sub: 0 });
          const ref = toReference('key', rk, encodeKv(kv))!;
          const back = decodeKv(fromReference('key', rk, ref)!);
          expect(back).to.deep.equal({ ...kv, key: Uint8Array.from(key), value: Uint8Array.from(value) });
        },
      ),
    );
    // the bytes the reference 3.4.23 stored for `put a 1` as the first write of a new cluster
    const ref = toReference('key', revToBytes({ main: 2, sub: 0 }), encodeKv({ key: Buffer.from('a'), value: Buffer.from('1'), createRevision: 2, modRevision: 2, version: 1, lease: 0n }));
    expect(Buffer.from(ref!).toString('hex')).to.equal('0a01611002180220012a0131');
  });

  it('a tombstone is the key alone in the reference, and gets its revision back in svc', () => {
    const rk = revToBytes({ main: 9, sub: 1 }, true);
    const ref = toReference('key', rk, encodeKv({ key: Buffer.from('gone'), value: new Uint8Array(0), createRevision: 0, modRevision: 9, version: 0, lease: 0n }))!;
    expect(Buffer.from(ref).toString('hex')).to.equal('0a04676f6e65');
    expect(decodeKv(fromReference('key', rk, ref)!).modRevision).to.equal(9);
  });

  it('leases, users and roles survive the round trip', () => {
    const lease = Buffer.alloc(24);
    lease.writeBigInt64BE(0x390da20a58fe7dd3n, 0);
    lease.writeBigInt64BE(600n, 8);
    const lref = toReference('lease', lease.subarray(0, 8), lease)!;
    // as the reference 3.4.23 stored this lease (granted with TTL 600)
    expect(Buffer.from(lref).toString('hex')).to.equal('08d3fbf9c7a5c1e8863910d804');
    expect(Buffer.from(fromReference('lease', lease.subarray(0, 8), lref)!).equals(lease)).to.equal(true);
    for (const u of [{ name: 'alice', password: 'scrypt$abc$def', roles: ['r1', 'r2'] }, { name: 'nopw', password: '', roles: [] }]) {
      const v = Buffer.from(JSON.stringify(u));
      expect(JSON.parse(Buffer.from(fromReference('authUsers', Buffer.from(u.name), toReference('authUsers', Buffer.from(u.name), v)!)!).toString())).to.deep.equal(u);
    }
    const role = { name: 'r1', perms: [{ permType: 'READWRITE', key: Buffer.from('a').toString('base64'), rangeEnd: Buffer.from('z').toString('base64') }, { permType: 'READ', key: Buffer.from('k').toString('base64'), rangeEnd: '' }] };
    const rv = Buffer.from(JSON.stringify(role));
    expect(JSON.parse(Buffer.from(fromReference('authRoles', Buffer.from('r1'), toReference('authRoles', Buffer.from('r1'), rv)!)!).toString())).to.deep.equal(role);
  });

  it('drops what the new cluster decides itself (members, alarms, cluster version, 3.5 conf state) and svc\'s v2 data', () => {
    expect(fromReference('members', Buffer.from('1'), Buffer.from('{}'))).to.equal(undefined);
    expect(fromReference('alarm', Buffer.from('x'), Buffer.alloc(0))).to.equal(undefined);
    expect(fromReference('cluster', Buffer.from('clusterVersion'), Buffer.from('3.5.0'))).to.equal(undefined);
    expect(fromReference('meta', Buffer.from('confState'), Buffer.from('{}'))).to.equal(undefined);
    expect(Buffer.from(fromReference('meta', Buffer.from('finishedCompactRev'), Buffer.from('x'))!).toString()).to.equal('x');
    expect(toReference('v2', Buffer.from('/a'), Buffer.from('x'))).to.equal(undefined);
  });

  it('writes member records as the reference does (uint64 ids exact, empty fields left out)', () => {
    // the record the reference 3.4.23 stored for a one-member cluster
    expect(memberJSON({ id: 0xbdae9bbc11dd390dn, name: 'e1', peerURLs: ['http://127.0.0.1:23801'], clientURLs: ['http://127.0.0.1:23791'], isLearner: false }))
      .to.equal('{"id":13668033151171901709,"peerURLs":["http://127.0.0.1:23801"],"name":"e1","clientURLs":["http://127.0.0.1:23791"]}');
    expect(memberJSON({ id: 1n, name: '', peerURLs: ['http://a'], clientURLs: [], isLearner: true })).to.equal('{"id":1,"peerURLs":["http://a"],"isLearner":true}');
  });

  it('computes CRC-32C (the checksum of the reference\'s snapshot status)', () => {
    expect(crc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
    expect(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234')))).to.equal(0xe3069283);
  });
});
