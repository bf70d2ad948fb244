// The corruption checks' rules: which peer answers make the initial check fail, which raise CORRUPT on the leader
// (once, for member 0), which are skipped; and the /members/hashkv answers.
import { expect } from 'chai';
import { CorruptionChecker, PeerHashError, serveHashKV, type KvHash } from '../../../server/core/corrupt.js';
import { errFutureRev } from '../../../server/mvcc/errors.js';
import { nopLogger, type Logger } from '../../../server/log/logger.js';

type Answer = KvHash | PeerHashError;

function checker(local: KvHash[], answers: Record<string, Answer>) {
  const lines: string[] = [];
  const alarms: bigint[] = [];
  const logger = { ...nopLogger, info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) } as Logger;
  const hashes = [...local];
  const c = new CorruptionChecker({
    memberId: 1n, clusterId: 9n, logger, requestTimeoutMs: () => 7000,
    hashByRev: () => (hashes.length > 1 ? hashes.shift()! : hashes[0]),
    peers: () => [{ id: 1n, peerURLs: ['http://self'] }, ...Object.keys(answers).map((u, i) => ({ id: BigInt(i + 2), peerURLs: [u] }))],
    linearizableReadNotify: async () => undefined,
    triggerCorruptAlarm: (id) => alarms.push(id),
    fetch: async (url) => {
      const a = answers[url];
      if (a instanceof PeerHashError) throw a;
      return a;
    },
  });
  return { c, lines, alarms };
}

const H = (hash: number, revision = 10, compactRevision = -1): KvHash => ({ hash, revision, compactRevision });
const future = () => new PeerHashError('future', 'mvcc: required revision is a future revision');

describe('corruption checks', () => {
  it('initial check: the same hash passes; another hash at the same compact revision fails; a peer behind or compacted differently does not', async () => {
    const ok = checker([H(7)], { 'http://a': H(7, 12), 'http://b': future(), 'http://c': H(8, 10, 5) });
    await ok.c.initialCheck();
    expect(ok.lines).to.deep.equal([
      'starting initial corruption check', 'failed hash kv request', 'cannot fetch hash from slow remote peer',
      'found different compact revision values from remote peer', 'initial corruption checking passed; no corruption',
    ]);
    const bad = checker([H(7)], { 'http://a': H(7), 'http://b': H(8) });
    const err = await bad.c.initialCheck().then(() => undefined, (e: Error) => e);
    expect(err?.message).to.equal('1 found data inconsistency with peers');
    expect(bad.lines).to.include('found different hash values from remote peer');
  });

  it('periodic check: a follower with another hash at the same compact revision raises CORRUPT for member 0, once; one behind is skipped', async () => {
    const bad = checker([H(7)], { 'http://a': H(8), 'http://b': H(9), 'http://c': future() });
    await bad.c.periodicCheck();
    expect(bad.alarms).to.deep.equal([0n]);
    expect(bad.lines.filter((l) => l === 'same compact revision then hashes must match')).to.have.length(2);
    const ok = checker([H(7), H(7, 11)], { 'http://a': H(7), 'http://c': future() });
    await ok.c.periodicCheck();
    expect(ok.alarms).to.deep.equal([]);
    expect(ok.lines.at(-1)).to.equal('finished peer corruption check');
    // a follower ahead of the leader, and the leader's own hash changing at the same revision, raise it too
    const ahead = checker([H(7), H(7)], { 'http://a': H(7, 11) });
    await ahead.c.periodicCheck();
    expect(ahead.alarms).to.deep.equal([0n]);
    const self = checker([H(7), H(6)], {});
    await self.c.periodicCheck();
    expect(self.alarms).to.deep.equal([0n]);
    expect(self.lines).to.include('found hash mismatch');
  });

  it('/members/hashkv answers GET only, of its cluster, with the hash or the mvcc error', () => {
    const d = { clusterId: 0xabn, logger: nopLogger, hashByRev: (rev: number) => { if (rev > 10) throw errFutureRev(); return H(7, 10, -1); } };
    expect(serveHashKV(d, 'POST', '/members/hashkv', undefined, '').status).to.equal(405);
    expect(serveHashKV(d, 'GET', '/members/hashkv', 'cd', '{}')).to.deep.equal({ status: 412, body: 'cluster ID mismatch\n' });
    expect(serveHashKV(d, 'GET', '/members/hashkv', 'ab', '{"revision":11}')).to.deep.equal({ status: 400, body: 'mvcc: required revision is a future revision\n' });
    expect(JSON.parse(serveHashKV(d, 'GET', '/members/hashkv', 'ab', '{"revision":10}').body)).to.deep.equal({ header: { revision: 10 }, hash: 7, compact_revision: -1 });
  });
});
