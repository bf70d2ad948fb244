// Delta segments (operator/backup/delta.ts): watch events grouped by revision, the segment format written and read
// back, and every way a segment or a set of segments is refused (another format, a newer version, altered bytes, a
// hole in the revisions, a target the segments do not reach).
import { expect } from 'chai';
import { changesBetween, contiguityProblem, decodeSegment, encodeSegment, groupByRevision, makeSegment, segmentFileName, type RevisionChange, type WatchedEvent } from '../../../operator/backup/delta.js';

const put = (k: string, v: string, r: number): WatchedEvent => ({ type: 'PUT', kv: { key: Buffer.from(k), value: Buffer.from(v), mod_revision: String(r) } });
const del = (k: string, r: number): WatchedEvent => ({ type: 'DELETE', kv: { key: Buffer.from(k), mod_revision: String(r) } });
const T0 = new Date('2026-11-27T09:00:00Z');
const T1 = new Date('2026-11-27T09:00:04Z');

describe('operator/backup delta segments', () => {
  it('groups events by revision, joining a revision split over two responses; refuses events out of order', () => {
    const changes = groupByRevision([put('a', '1', 11), put('b', '2', 12), del('a', 12)]);
    groupByRevision([put('c', '3', 12), put('a', '4', 13)], changes);
    expect(changes.map((c) => [c.revision, c.ops.map((o) => `${o.type}:${o.key.toString()}`).join(',')])).to.deep.equal([[11, 'put:a'], [12, 'put:b,delete:a,put:c'], [13, 'put:a']]);
    expect(() => groupByRevision([put('a', '1', 12), put('b', '1', 11)])).to.throw(/revision 11 after revision 12/);
  });

  it('writes and reads a segment: the same changes, binary keys and values intact, names that sort by revision', () => {
    const changes: RevisionChange[] = groupByRevision([put('\u0000k', 'v', 7), del('x', 8), put('y', '', 9), put('z', '\u00ff', 9)]);
    const seg = makeSegment(changes, T0, T1);
    const back = decodeSegment(encodeSegment(seg));
    expect(back).to.deep.equal(seg);
    expect(back).to.deep.include({ fromRevision: 7, toRevision: 9, firstTime: T0.toISOString(), lastTime: T1.toISOString() });
    expect(segmentFileName(seg)).to.equal('delta-0000000000000007-0000000000000009.jsonl');
    expect(segmentFileName({ fromRevision: 10, toRevision: 10 }) > segmentFileName(seg)).to.equal(true);
  });

  it('each revision carries when the writer saw it committed; a segment without those times (an older agent) still reads', () => {
    const changes = groupByRevision([put('a', '1', 7), put('b', '2', 8)], [], T0);
    groupByRevision([put('c', '3', 8), put('d', '4', 9)], changes, T1);
    expect(changes.map((c) => [c.revision, c.seen])).to.deep.equal([[7, T0.toISOString()], [8, T0.toISOString()], [9, T1.toISOString()]]);
    const seg = makeSegment(changes, T0, T1);
    expect(decodeSegment(encodeSegment(seg))).to.deep.equal(seg);
    const old = makeSegment(groupByRevision([put('a', '1', 7)]), T0, T1);
    expect(encodeSegment(old).toString()).to.not.include('"s":');
    expect(decodeSegment(encodeSegment(old)).changes[0]).to.not.have.property('seen');
  });

  it('refuses another format, a newer version, altered or truncated bytes, a hole, and a header that disagrees', () => {
    const good = encodeSegment(makeSegment(groupByRevision([put('a', '1', 5), put('b', '2', 6)]), T0, T1));
    expect(() => decodeSegment(Buffer.from('{"format":"other"}\n'), 's1')).to.throw(/s1: not a delta segment/);
    const lines = good.toString().split('\n');
    const header = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(() => decodeSegment(Buffer.from([JSON.stringify({ ...header, version: 2 }), ...lines.slice(1)].join('\n')), 's2')).to.throw(/s2: format version 2; this release reads version 1/);
    const altered = Buffer.from(good);
    altered[altered.length - 5] ^= 1;
    expect(() => decodeSegment(altered, 's3')).to.throw(/s3: sha256 mismatch/).with.property('problem', 'sha256 mismatch (the file is truncated or altered)');
    expect(() => decodeSegment(good.subarray(0, good.length - 10), 's4')).to.throw(/s4: sha256 mismatch/);
    expect(() => makeSegment(groupByRevision([put('a', '1', 5), put('b', '2', 7)]), T0, T1)).to.throw(/revisions 6\.\.6 are missing/);
    expect(() => decodeSegment(Buffer.from([JSON.stringify({ ...header, toRevision: 7 }), ...lines.slice(1)].join('\n')), 's5')).to.throw(/s5: the header says revisions 5\.\.7/);
    expect(contiguityProblem([])).to.equal('no revisions');
    expect(contiguityProblem([{ revision: 4, ops: [] }])).to.match(/no writes/);
  });

  it('the changes from a snapshot at base to a target: across overlapping segments in any order; a gap or a short reach is refused with the range covered', () => {
    const seg = (from: number, to: number) => makeSegment(Array.from({ length: to - from + 1 }, (_, i) => ({ revision: from + i, ops: [{ type: 'put' as const, key: Buffer.from('k'), value: Buffer.from(String(from + i)) }] })), T0, T1);
    const got = changesBetween([seg(15, 20), seg(10, 16)], 11, 18);
    expect(got.map((c) => c.revision)).to.deep.equal([12, 13, 14, 15, 16, 17, 18]);
    expect(() => changesBetween([seg(10, 12), seg(14, 20)], 10, 15)).to.throw(/revision 13 is in no delta segment: from the snapshot at 10 the segments cover revisions 11\.\.12, not up to 15/);
    expect(() => changesBetween([seg(10, 12)], 12, 14)).to.throw(/cover revisions none/);
    expect(changesBetween([], 9, 9)).to.deep.equal([]);
  });
});
