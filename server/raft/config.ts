// The settings of the consensus core (its own module: raft.ts and rawnode.ts both need them).
import type { Logger } from '../log/logger.js';
import type { MemoryStorage } from './storage.js';
import type { NodeId } from './types.js';

/** Settings of one member's consensus core. */
export interface RaftConfig {
  id: NodeId;
  /** Ticks without hearing from a leader before a follower campaigns (randomized up to twice this). */
  electionTick: number;
  /** Ticks between a leader's heartbeats. */
  heartbeatTick: number;
  storage: MemoryStorage;
  /** The last index the application applied before a restart. */
  applied?: number;
  /** Byte budget of one append message (default 1 MiB). */
  maxSizePerMsg?: number;
  /** Unacknowledged append messages per follower in pipeline mode (default 256). */
  maxInflightMsgs?: number;
  /** Byte budget of Ready.committedEntries (default unlimited). */
  maxCommittedSizePerReady?: number;
  preVote: boolean;
  checkQuorum: boolean;
  disableProposalForwarding?: boolean;
  /** Seeded source in [0,1) for randomized election timeouts. */
  random: () => number;
  logger?: Logger;
}
