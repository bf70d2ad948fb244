// The initial election tick advance's rules (server/core/tick-advance.ts), with a fake clock and peers.
import { expect } from 'chai';
import { adjustTicks, PEER_POLL_MS, PEER_WAIT_MS, type TickAdvanceDeps } from '../../../server/core/tick-advance.js';
import { nopLogger, type Logger } from '../../../server/log/logger.js';

function run(o: Partial<TickAdvanceDeps> & { peersAfterMs?: number; peers?: number }) {
  let now = 0;
  const advanced: number[] = [];
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const logger: Logger = { ...nopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields: fields ?? {} }) } as Logger;
  const done = adjustTicks({
    memberId: 0x1234n, clusterSize: 3, electionTicks: 10, tickMs: 100, enabled: true, logger, stopping: () => false,
    activePeers: () => (o.peersAfterMs !== undefined && now >= o.peersAfterMs ? (o.peers ?? 2) : 0),
    advance: (n) => advanced.push(n),
    sleep: async (ms) => {
      now += ms;
    },
    ...o,
  });
  return done.then((ticks) => ({ ticks, advanced, lines, now }));
}

describe('core/tick-advance: --initial-election-tick-advance', () => {
  it('a single-node cluster fast-forwards electionTicks - 1 at once, with or without the flag', async () => {
    for (const enabled of [true, false]) {
      const r = await run({ clusterSize: 1, enabled });
      expect(r.advanced).to.deep.equal([9]);
      expect(r.lines[0].msg).to.equal('started as single-node; fast-forwarding election ticks');
      expect(r.lines[0].fields).to.deep.equal({ 'local-member-id': '1234', 'forward-ticks': 9, 'forward-duration': '900ms', 'election-ticks': 10, 'election-timeout': '1s' });
    }
  });

  it('with peers: electionTicks - 2 once more than one peer is active', async () => {
    const r = await run({ peersAfterMs: 1000 });
    expect(r.advanced).to.deep.equal([8]);
    expect(r.now).to.equal(1000);
    expect(r.lines.map((l) => l.msg)).to.deep.equal(['starting initial election tick advance', 'initialized peer connections; fast-forwarding election ticks']);
    expect(r.lines[1].fields['active-remote-members']).to.equal(2);
  });

  it('nothing when the flag is off, when only one peer is active (2 members) or none within the wait', async () => {
    const off = await run({ enabled: false, peersAfterMs: 0 });
    expect(off.advanced).to.deep.equal([]);
    expect(off.lines.map((l) => l.msg)).to.deep.equal(['skipping initial election tick advance']);
    const one = await run({ clusterSize: 2, peersAfterMs: 0, peers: 1 });
    expect(one.advanced).to.deep.equal([]);
    expect(one.now).to.equal(PEER_WAIT_MS);
    const late = await run({ peersAfterMs: PEER_WAIT_MS + PEER_POLL_MS });
    expect(late.advanced).to.deep.equal([]);
  });

  it('a member stopping while it waits advances nothing', async () => {
    let calls = 0;
    const r = await run({ peersAfterMs: 1000, stopping: () => ++calls > 3 });
    expect(r.advanced).to.deep.equal([]);
    expect(r.now).to.equal(4 * PEER_POLL_MS);
  });
});
