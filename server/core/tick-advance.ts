// --initial-election-tick-advance: how many election ticks a member fast-forwards when it starts, so its first
// election does not wait a whole election timeout, with the reference's rules (3.4/3.5):
//  - the only member of its cluster (a fresh start or a restart) always fast-forwards electionTicks - 1: it
//    campaigns after 1 to electionTicks ticks instead of electionTicks to 2 * electionTicks - 1;
//  - otherwise only with the flag on (the default): the member waits up to 5 s (the peer connection read
//    timeout), looking every 50 ms, until it has more than one active peer, then fast-forwards electionTicks - 2,
//    leaving two ticks for a leader's message to arrive; if that never happens (peers down, a 2-member cluster)
//    nothing is advanced.
import type { Logger } from '../log/logger.js';
import { idHex } from '../cluster/ids.js';
import { formatDuration as duration } from './lifecycle.js';

/** How long the member waits for its peers' connections (the reference's rafthttp.ConnReadTimeout). */
export const PEER_WAIT_MS = 5000;
/** How often it looks. */
export const PEER_POLL_MS = 50;

export interface TickAdvanceDeps {
  memberId: bigint;
  /** Members of the cluster, this one included. */
  clusterSize: number;
  electionTicks: number;
  tickMs: number;
  /** --initial-election-tick-advance. */
  enabled: boolean;
  /** Peers whose connection is active now. */
  activePeers(): number;
  /** Tick the consensus core `n` times at once. */
  advance(n: number): void;
  /** True once the member is stopping: give up. */
  stopping(): boolean;
  logger: Logger;
  sleep?: (ms: number) => Promise<void>;
}


/** Runs the rules above once; resolves with the ticks advanced (0: none). */
export async function adjustTicks(d: TickAdvanceDeps): Promise<number> {
  const sleep = d.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const fields = (ticks: number) => ({
    'local-member-id': idHex(d.memberId),
    'forward-ticks': ticks,
    'forward-duration': duration(ticks * d.tickMs),
    'election-ticks': d.electionTicks,
    'election-timeout': duration(d.electionTicks * d.tickMs),
  });
  if (d.clusterSize === 1) {
    const ticks = d.electionTicks - 1;
    d.logger.info('started as single-node; fast-forwarding election ticks', fields(ticks));
    d.advance(ticks);
    return ticks;
  }
  if (!d.enabled) {
    d.logger.info('skipping initial election tick advance', { 'election-ticks': d.electionTicks });
    return 0;
  }
  d.logger.info('starting initial election tick advance', { 'election-ticks': d.electionTicks });
  for (let i = 0; i < PEER_WAIT_MS / PEER_POLL_MS; i++) {
    await sleep(PEER_POLL_MS);
    if (d.stopping()) return 0;
    const peers = d.activePeers();
    if (peers > 1) {
      const ticks = d.electionTicks - 2;
      d.logger.info('initialized peer connections; fast-forwarding election ticks', { ...fields(ticks), 'active-remote-members': peers });
      d.advance(ticks);
      return ticks;
    }
  }
  return 0;
}
