import { expect } from 'chai';
import fc from 'fast-check';
import {
  CodecError,
  decodeConfState,
  decodeEntry,
  decodeHardState,
  decodeMarker,
  decodeSnapshot,
  encodeConfState,
  encodeEntry,
  encodeHardState,
  encodeMarker,
  encodeSnapshot,
  writeEntry,
  writeHardState,
  writeMarker,
} from '../../../server/storage/codec.js';
import { encodeFrame, FrameBuffer, RecordType, scanSegment } from '../../../server/storage/wal-record.js';

const num = fc.oneof(fc.nat(), fc.maxSafeNat());
const id = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const bytes = fc.uint8Array({ maxLength: 300 });
const confState = fc.record({ voters: fc.array(id, { maxLength: 7 }), learners: fc.array(id, { maxLength: 3 }) });

describe('wal codec', () => {
  it('round-trips entries, hard states, conf states, markers and snapshots', () => {
    fc.assert(
      fc.property(num, num, fc.constantFrom(0, 1), bytes, (term, index, type, data) => {
        expect(decodeEntry(encodeEntry({ term, index, type, data }))).to.deep.equal({ term, index, type, data });
      }),
    );
    fc.assert(
      fc.property(num, id, num, (term, vote, commit) => {
        expect(decodeHardState(encodeHardState({ term, vote, commit }))).to.deep.equal({ term, vote, commit });
      }),
    );
    fc.assert(
      fc.property(confState, (cs) => {
        expect(decodeConfState(encodeConfState(cs))).to.deep.equal(cs);
      }),
    );
    fc.assert(
      fc.property(num, num, fc.option(confState, { nil: undefined }), (index, term, cs) => {
        const m = cs ? { index, term, confState: cs } : { index, term };
        expect(decodeMarker(encodeMarker(m))).to.deep.equal(m);
      }),
    );
    fc.assert(
      fc.property(num, num, confState, bytes, (index, term, cs, data) => {
        const s = { metadata: { index, term, confState: cs }, data };
        expect(decodeSnapshot(encodeSnapshot(s))).to.deep.equal(s);
      }),
    );
  });

  it('is compact: a small entry costs a handful of bytes beyond its data', () => {
    const e = encodeEntry({ term: 5, index: 123456, type: 0, data: new Uint8Array(10) });
    expect(e.length).to.equal(1 + 1 + 1 + 3 + 1 + 10);
  });

  it('rejects truncated or trailing bytes with a typed error', () => {
    const b = encodeEntry({ term: 1, index: 2, type: 0, data: new Uint8Array([1, 2, 3]) });
    expect(() => decodeEntry(b.subarray(0, b.length - 1))).to.throw(CodecError);
    expect(() => decodeEntry(Buffer.concat([b, Buffer.from([0])]))).to.throw(CodecError);
    expect(() => decodeEntry(Buffer.from([9, 0, 1, 1, 0]))).to.throw(/version/);
  });

  it('frames records 8-byte aligned and scans them back', () => {
    const frames = [encodeFrame(RecordType.Crc, Buffer.alloc(4)), encodeFrame(RecordType.Entry, Buffer.from('hello'))];
    for (const f of frames) expect(f.buf.length % 8).to.equal(0);
    const file = Buffer.concat([...frames.map((f) => f.buf), Buffer.alloc(4096)]);
    const scan = scanSegment(file);
    expect(scan.failure).to.equal(undefined);
    expect(scan.records.map((r) => r.type)).to.deep.equal([RecordType.Crc, RecordType.Entry]);
    expect(scan.records[1]!.data.toString()).to.equal('hello');
    expect(scan.end).to.equal(frames[0]!.buf.length + frames[1]!.buf.length);
  });

  it('property: frames encoded in place, reusing one buffer, are the bytes and CRCs of encodeFrame', () => {
    const entry = fc.record({ term: num, index: num, type: fc.constantFrom(0 as const, 1 as const), data: bytes });
    const hs = fc.record({ term: num, vote: id, commit: num });
    const marker = fc.record({ index: num, term: num, confState: fc.option(confState, { nil: undefined }) });
    const fb = new FrameBuffer();
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), hs, marker, (es, h, m) => {
        fb.reset();
        const crcs: number[] = [];
        for (const e of es) {
          writeEntry(fb.begin(RecordType.Entry), e);
          crcs.push(fb.end());
        }
        writeHardState(fb.begin(RecordType.HardState), h);
        crcs.push(fb.end());
        writeMarker(fb.begin(RecordType.Snapshot), m);
        crcs.push(fb.end());
        const want = [...es.map((e) => encodeFrame(RecordType.Entry, encodeEntry(e))), encodeFrame(RecordType.HardState, encodeHardState(h)), encodeFrame(RecordType.Snapshot, encodeMarker(m))];
        expect(Buffer.compare(fb.view(), Buffer.concat(want.map((f) => f.buf)))).to.equal(0);
        expect(crcs).to.deep.equal(want.map((f) => f.crc));
      }),
    );
  });
});
