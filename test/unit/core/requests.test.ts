// The encoding of log entries: binary for the hot kinds (put, deleteRange), tagged JSON for the rest, and
// JSON entries written before the binary format still decode (they may sit in a WAL).
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeRequest, encodeRequest, encodeTagged, type InternalRequest } from '../../../server/core/requests.js';

const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
const id = fc.bigInt({ min: 1n, max: (1n << 64n) - 1n });
const lease = fc.bigInt({ min: 0n, max: (1n << 63n) - 1n });

const put = fc.record({ id, key: bytes, value: bytes, lease, prevKv: fc.boolean(), ignoreValue: fc.boolean(), ignoreLease: fc.boolean() }).map(
  ({ id, ...p }): InternalRequest => ({ id, kind: 'put', put: p }),
);
const del = fc.record({ id, key: bytes, rangeEnd: bytes, prevKv: fc.boolean() }).map(({ id, ...d }): InternalRequest => ({ id, kind: 'deleteRange', deleteRange: d }));
const other = fc.oneof(
  fc.record({ id, revision: fc.nat() }).map(({ id, revision }): InternalRequest => ({ id, kind: 'compaction', compaction: { revision, physical: false } })),
  fc.record({ id, version: fc.constantFrom('3.3', '3.4', '3.5') }).map(({ id, version }): InternalRequest => ({ id, kind: 'clusterVersionSet', clusterVersionSet: { version } })),
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

  it('refuses bytes that are neither format', () => {
    expect(() => decodeRequest(Buffer.from([0xff, 0x00, 0x13]))).to.throw();
  });
});
