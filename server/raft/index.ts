// The public surface of the consensus core (pure: no timers, sockets, disk, clock or ambient
// randomness). Usage in short:
//
//   RawNode.bootstrap(storage, peers)           // once, for a brand-new cluster
//   const node = new RawNode({ id, storage, electionTick, heartbeatTick, preVote, checkQuorum, random });
//   on every timer tick: node.tick(); on every peer message: node.step(m);
//   while (node.hasReady()) { const rd = node.ready(); persist; send; apply; node.advance(rd); }
//
// The exact order of the Ready loop is documented at the top of rawnode.ts.

export * from './types.js';
export * from './errors.js';
export { MemoryStorage, emptyHardState, emptySnapshot } from './storage.js';
export { RawNode } from './rawnode.js';
export type { RaftConfig, RaftStatus, PeerProgress } from './rawnode.js';
export { ProgressState } from './progress.js';
export { encodeConfChange, decodeConfChange } from './confchange-codec.js';
export { CAMPAIGN_TRANSFER } from './raft.js';
