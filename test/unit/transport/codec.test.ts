import { expect } from 'chai';
import fc from 'fast-check';

import { CodecError, FrameDecoder, decodeMessage, encodeFrames, encodeMessage, encodedSize } from '../../../server/transport/codec.js';
import { EntryType, MessageType } from '../../../server/raft/types.js';
import type { Entry, Message } from '../../../server/raft/types.js';

function msg(type: MessageType, over: Partial<Message> = {}): Message {
  return {
    type,
    to: 0x8e9e05c52164694dn,
    from: 0xfd422379fda50e48n,
    term: 7,
    logTerm: 6,
    index: 123456,
    entries: [],
    commit: 123400,
    reject: false,
    rejectHint: 0,
    context: new Uint8Array(0),
    ...over,
  };
}

/** Compares field by field, bytes as plain arrays (decoded bytes are Uint8Array, inputs may be Buffers). */
function normalize(m: Message): unknown {
  return {
    ...m,
    context: Array.from(m.context),
    entries: m.entries.map((e) => ({ ...e, data: Buffer.from(e.data).toString('hex') })),
    snapshot: m.snapshot && { ...m.snapshot, data: Buffer.from(m.snapshot.data).toString('hex') },
  };
}

describe('transport codec', () => {
  it('round-trips every message type', () => {
    for (const type of Object.values(MessageType)) {
      const m = msg(type, {
        reject: type === MessageType.AppResp,
        rejectHint: 99,
        context: Buffer.from('ctx-' + type),
        entries: [
          { term: 7, index: 123457, type: EntryType.Normal, data: Buffer.from('hello') },
          { term: 7, index: 123458, type: EntryType.ConfChange, data: new Uint8Array([1, 2, 3]) },
          { term: 7, index: 123459, type: EntryType.Normal, data: new Uint8Array(0) },
        ],
      });
      const buf = encodeMessage(m);
      expect(buf.length).to.equal(encodedSize(m));
      expect(normalize(decodeMessage(buf))).to.deep.equal(normalize(m));
    }
  });

  it('round-trips a snapshot message with conf state and several MB of data', () => {
    const data = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4096) data[i] = i & 0xff;
    const m = msg(MessageType.Snap, {
      snapshot: {
        metadata: { index: 2 ** 40, term: 3, confState: { voters: [1n, 2n, 0xffffffffffffffffn], learners: [4n] } },
        data,
      },
    });
    const out = decodeMessage(encodeMessage(m));
    expect(out.snapshot?.metadata).to.deep.equal(m.snapshot?.metadata);
    expect(Buffer.compare(Buffer.from(out.snapshot!.data), data)).to.equal(0);
  });

  it('round-trips big entries and indexes up to 2^53-1', () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 0xab);
    const m = msg(MessageType.App, {
      term: Number.MAX_SAFE_INTEGER,
      index: Number.MAX_SAFE_INTEGER - 1,
      entries: [{ term: 1, index: Number.MAX_SAFE_INTEGER, type: EntryType.Normal, data: big }],
    });
    const out = decodeMessage(encodeMessage(m));
    expect(out.term).to.equal(Number.MAX_SAFE_INTEGER);
    expect(out.entries[0].index).to.equal(Number.MAX_SAFE_INTEGER);
    expect(Buffer.compare(Buffer.from(out.entries[0].data), big)).to.equal(0);
  });

  it('copies entry bytes so they do not pin the input buffer', () => {
    const buf = encodeMessage(msg(MessageType.App, { entries: [{ term: 1, index: 1, type: EntryType.Normal, data: Buffer.from('x') }] }));
    const out = decodeMessage(buf);
    expect(out.entries[0].data.buffer).to.not.equal(buf.buffer);
  });

  it('rejects truncated, trailing and unknown input with CodecError', () => {
    const buf = encodeMessage(msg(MessageType.App, { entries: [{ term: 1, index: 1, type: EntryType.Normal, data: Buffer.from('abc') }] }));
    expect(() => decodeMessage(buf.subarray(0, buf.length - 1))).to.throw(CodecError);
    expect(() => decodeMessage(Buffer.concat([buf, Buffer.from([0])]))).to.throw(CodecError, /trailing/);
    const badType = Buffer.from(buf);
    badType[1] = 200;
    expect(() => decodeMessage(badType)).to.throw(CodecError, /type code/);
    const badVersion = Buffer.from(buf);
    badVersion[0] = 9;
    expect(() => decodeMessage(badVersion)).to.throw(CodecError, /version/);
  });

  it('frames survive any chunking, and zero-length keepalive frames are skipped', () => {
    const msgs = Array.from({ length: 50 }, (_, i) =>
      msg(MessageType.App, { index: i, entries: [{ term: 1, index: i, type: EntryType.Normal, data: Buffer.alloc(i * 37, i) }] }),
    );
    const stream = Buffer.concat([Buffer.alloc(4), encodeFrames(msgs.slice(0, 25)), Buffer.alloc(4), encodeFrames(msgs.slice(25))]);
    for (const chunkSize of [1, 3, 7, 1000, stream.length]) {
      const d = new FrameDecoder();
      const got: number[] = [];
      for (let off = 0; off < stream.length; off += chunkSize) {
        d.push(stream.subarray(off, off + chunkSize), (p) => got.push(decodeMessage(p).index));
      }
      expect(got).to.deep.equal(msgs.map((m) => m.index));
      expect(d.pending).to.equal(0);
    }
  });

  it('refuses a frame length above the limit', () => {
    const d = new FrameDecoder();
    const head = Buffer.alloc(4);
    head.writeUInt32LE(0xffffffff, 0);
    expect(() => d.push(head, () => {})).to.throw(CodecError, /exceeds/);
  });

  it('property: decode(encode(m)) == m for arbitrary messages, through random chunking', () => {
    const u64 = fc.bigInt({ min: 0n, max: 0xffffffffffffffffn });
    const num = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    const bytes = fc.uint8Array({ maxLength: 300 });
    const entry: fc.Arbitrary<Entry> = fc.record({
      term: num,
      index: num,
      type: fc.constantFrom(EntryType.Normal, EntryType.ConfChange),
      data: bytes,
    });
    const message: fc.Arbitrary<Message> = fc
      .record({
        type: fc.constantFrom(...Object.values(MessageType)),
        to: u64,
        from: u64,
        term: num,
        logTerm: num,
        index: num,
        entries: fc.array(entry, { maxLength: 8 }),
        commit: num,
        reject: fc.boolean(),
        rejectHint: num,
        context: bytes,
        snapshot: fc.option(
          fc.record({
            metadata: fc.record({
              index: num,
              term: num,
              confState: fc.record({ voters: fc.array(u64, { maxLength: 5 }), learners: fc.array(u64, { maxLength: 3 }) }),
            }),
            data: fc.uint8Array({ maxLength: 2000 }),
          }),
          { nil: undefined },
        ),
      })
      .map((m) => {
        if (m.snapshot === undefined) delete (m as Partial<Message>).snapshot;
        return m as Message;
      });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 97 }), (msgs, chunk) => {
        for (const m of msgs) expect(normalize(decodeMessage(encodeMessage(m)))).to.deep.equal(normalize(m));
        const stream = encodeFrames(msgs);
        const d = new FrameDecoder();
        const got: Message[] = [];
        for (let off = 0; off < stream.length; off += chunk) d.push(stream.subarray(off, off + chunk), (p) => got.push(decodeMessage(p)));
        expect(got.map(normalize)).to.deep.equal(msgs.map(normalize));
      }),
      { numRuns: 300 },
    );
  });
});
