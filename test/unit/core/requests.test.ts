// The encoding of log entries: binary for the hot kinds (put, deleteRange), tagged JSON for the rest, and
// JSON entries written before the binary format still decode (they may sit in a WAL).
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeRequest, encodeRequest, encodeTagged, type InternalRequest } from '../../../server/core/requests.js';

const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
const id = fc.bigInt({ min: 1n, max: (1n << 64n) - 1n });
const lease = fc.bigInt({ min: 0n, max: (1n << 63n) - 1n });

// The caller a proposal carries (absent on the server's own requests and on entries written before it existed).
const header = fc.option(fc.record({ username: fc.string({ unit: 'grapheme', maxLength: 40 }), authRevision: fc.nat() }), { nil: undefined });
const put = fc.record({ id, header, key: bytes, value: bytes, lease, prevKv: fc.boolean(), ignoreValue: fc.boolean(), ignoreLease: fc.boolean() }).map(
  ({ id, header, ...p }): InternalRequest => (header ? { id, header, kind: 'put', put: p } : { id, kind: 'put', put: p }),
);
const del = fc.record({ id, header, key: bytes, rangeEnd: bytes, prevKv: fc.boolean() }).map(
  ({ id, header, ...d }): InternalRequest => (header ? { id, header, kind: 'deleteRange', deleteRange: d } : { id, kind: 'deleteRange', deleteRange: d }),
);
const other = fc.oneof(
  fc.record({ id, revision: fc.nat() }).map(({ id, revision }): InternalRequest => ({ id, kind: 'compaction', compaction: { revision, physical: false } })),
  fc.record({ id, version: fc.constantFrom('3.3', '3.4', '3.5') }).map(({ id, version }): InternalRequest => ({ id, kind: 'clusterVersionSet', clusterVersionSet: { version } })),
  fc.record({ id, header, lease }).map(({ id, header, lease }): InternalRequest => ({ id, header, kind: 'leaseRevoke', leaseRevoke: { id: lease } })),
);

function same(a: InternalRequest, b: InternalRequest): void {
  expect(JSON.stringify(encodeTagged(b))).to.equal(JSON.stringify(encodeTagged(a)));
}

describe('log entry encoding', () => {
  it('round-trips every request kind exactly (bytes and 64-bit ids included)', () => {
    fc.assert(fc.property(fc.oneof(put, del, other), (r) => same(r, decodeRequest(encodeRequest(r)))), { numRuns: 500 });
  });

  it('writes put and deleteRange in the binary format, marked by a first byte no JSON text starts with', () => {
    const p: InternalRequest = { id: 7n, kind: 'put', put: { key: Buffer.from('k'), value: Buffer.from('v'), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } };
    expect(encodeRequest(p)[0]).to.equal(0x01);
  });

  it('still decodes entries written as tagged JSON before the binary format', () => {
    const old: InternalRequest = { id: 0xabcn, kind: 'put', put: { key: Buffer.from('old'), value: Buffer.from('json'), lease: 5n, prevKv: true, ignoreValue: false, ignoreLease: false } };
    same(old, decodeRequest(encodeTagged(old)));
  });

  it('a decoder that knows no header reads the rest of a binary entry with one as before', () => {
    const p: InternalRequest = { id: 9n, header: { username: 'alice', authRevision: 12 }, kind: 'put', put: { key: Buffer.from('k'), value: Buffer.from('v'), lease: 3n, prevKv: true, ignoreValue: false, ignoreLease: false } };
    const withHeader = Buffer.from(encodeRequest(p));
    const { header: _h, ...bare } = p;
    const without = Buffer.from(encodeRequest(bare as InternalRequest));
    // the same bytes but the header flag (8) and the trailing header fields
    expect(withHeader[10]).to.equal(without[10] | 8);
    expect(withHeader.subarray(11, without.length)).to.deep.equal(without.subarray(11));
    expect(decodeRequest(withHeader).header).to.deep.equal({ username: 'alice', authRevision: 12 });
  });

  it('refuses bytes that are neither format', () => {
    expect(() => decodeRequest(Buffer.from([0xff, 0x00, 0x13]))).to.throw();
  });
});
