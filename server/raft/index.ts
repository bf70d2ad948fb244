// The public surface of the consensus core.

export * from './types.js';
export * from './errors.js';
export { MemoryStorage, emptyHardState, emptySnapshot } from './storage.js';
export { RawNode } from './rawnode.js';
export type { RaftConfig, RaftStatus, PeerProgress } from './rawnode.js';
export { ProgressState } from './progress.js';
export { encodeConfChange, decodeConfChange } from './confchange-codec.js';
export { CAMPAIGN_TRANSFER } from './raft.js';
