// --initial-election-tick-advance next to the reference 3.5.21. A single member fast-forwards electionTicks - 1
// ticks at start, so it campaigns after 1 to electionTicks ticks instead of electionTicks to 2 * electionTicks - 1:
// with a 5 s election timeout, three single-member clusters of each elect within ~5 s of becoming followers, and
// the fastest well before 4.5 s (without the advance none could be under 5 s). Three members fast-forward
// electionTicks - 2 once their peers are connected, logging the reference's line with the same fields.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ref35, startReferenceCluster, type ReferenceCluster } from '../../../harness/reference-cluster.js';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';

type Line = Record<string, unknown> & { msg: string; ts: string };

function logLines(file: string): Line[] {
  const text = readFileSync(file, 'utf8');
  // svc appends across restarts: only the last start's lines.
  const last = text.lastIndexOf('=== svc start');
  return text.slice(last < 0 ? 0 : last).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
}

/** ms from "became follower at term 1" to "became leader" in a member's log. */
function firstElectionMs(file: string): number {
  const lines = logLines(file);
  const at = (re: RegExp) => {
    const l = lines.find((x) => re.test(x.msg));
    if (!l) throw new Error(`${file}: no line matching ${re}`);
    return Date.parse(l.ts);
  };
  return at(/became leader at term/) - at(/became follower at term 1$/);
}

describe('--initial-election-tick-advance side by side: svc 3.5 and the reference 3.5.21', function () {
  this.timeout(90000);
  const svcs: SvcCluster[] = [];
  const refs: ReferenceCluster[] = [];
  printLogsOnFailure(() => svcs);
  after(async () => {
    await Promise.all([...svcs.map((c) => c.close()), ...refs.map((c) => c.stop())]);
  });

  it('single members: elected within an election timeout of starting, the fastest well before it', async () => {
    const extraArgs = ['--heartbeat-interval=100', '--election-timeout=5000'];
    const started = await Promise.all([
      ...[0, 1, 2].map(() => startSvcCluster({ size: 1, extraArgs }).then((c) => (svcs.push(c), c.members[0].logFile))),
      ...[0, 1, 2].map(() => startReferenceCluster({ size: 1, binary: ref35('etcd'), extraArgs }).then((c) => (refs.push(c), c.members[0].logFile))),
    ]);
    const ms = started.map(firstElectionMs);
    for (const [who, xs] of [['svc', ms.slice(0, 3)], ['reference', ms.slice(3)]] as const) {
      for (const x of xs) expect(x, `${who} ${xs.join(', ')}`).to.be.within(0, 6000);
      expect(Math.min(...xs), `${who} ${xs.join(', ')}`).to.be.below(4500);
    }
    const line = (file: string) => logLines(file).find((l) => l.msg === 'started as single-node; fast-forwarding election ticks');
    const [s, r] = [line(started[0]), line(started[3])];
    expect(s, 'svc').to.not.equal(undefined);
    for (const k of ['forward-ticks', 'forward-duration', 'election-ticks', 'election-timeout']) expect(s![k], k).to.equal(r![k]);
  });

  it('three members: each fast-forwards electionTicks - 2 once its two peers are connected, as the reference logs it', async () => {
    const [svc, ref] = await Promise.all([startSvcCluster({ size: 3 }), startReferenceCluster({ size: 3, binary: ref35('etcd') })]);
    svcs.push(svc);
    refs.push(ref);
    const KEYS = ['forward-ticks', 'forward-duration', 'election-ticks', 'election-timeout', 'active-remote-members'];
    const lines = (files: string[]) =>
      files.flatMap((f) => logLines(f).filter((l) => l.msg === 'initialized peer connections; fast-forwarding election ticks').map((l) => Object.fromEntries(KEYS.map((k) => [k, l[k]]))));
    const s = lines(svc.members.map((m) => m.logFile));
    const r = lines(ref.members.map((m) => m.logFile));
    expect(r.length).to.be.at.least(1);
    expect(s.length).to.be.at.least(1);
    for (const x of s) expect(x).to.deep.equal(r[0]);
    for (const m of svc.members) expect(logLines(m.logFile).some((l) => l.msg === 'starting initial election tick advance'), m.name).to.equal(true);
  });
});
