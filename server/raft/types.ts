// The data the consensus core exchanges with its caller. These types are the contract between
// server/raft (pure), server/storage (persists them) and server/transport (carries messages).

/** Member ids are 64-bit; bigint keeps them exact (they are printed as hex everywhere). */
export type NodeId = bigint;

/** 0 means "no node" (no vote, no leader). */
export const NONE: NodeId = 0n;

export enum EntryType {
  Normal = 0,
  ConfChange = 1,
}

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  /** Opaque to raft: an encoded request (Normal) or an encoded ConfChange. Empty for the leader's no-op. */
  data: Uint8Array;
}

export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

export enum ConfChangeType {
  AddNode = 0,
  RemoveNode = 1,
  UpdateNode = 2,
  AddLearnerNode = 3,
}

export interface ConfChange {
  type: ConfChangeType;
  nodeId: NodeId;
  /** Opaque to raft (the server stores the member's attributes here). */
  context: Uint8Array;
}

/** The voting and non-voting members as of some log index. */
export interface ConfState {
  voters: NodeId[];
  learners: NodeId[];
}

export interface SnapshotMetadata {
  index: number;
  term: number;
  confState: ConfState;
}

export interface Snapshot {
  metadata: SnapshotMetadata;
  /** Opaque to raft: the application's state at metadata.index. */
  data: Uint8Array;
}

export enum MessageType {
  Hup = 'Hup', // local: start an election
  Beat = 'Beat', // local: leader sends heartbeats
  Prop = 'Prop', // proposal (local, or forwarded by a follower)
  App = 'App',
  AppResp = 'AppResp',
  Vote = 'Vote',
  VoteResp = 'VoteResp',
  PreVote = 'PreVote',
  PreVoteResp = 'PreVoteResp',
  Snap = 'Snap',
  Heartbeat = 'Heartbeat',
  HeartbeatResp = 'HeartbeatResp',
  Unreachable = 'Unreachable', // local: transport reports a peer unreachable
  SnapStatus = 'SnapStatus', // local: transport reports a snapshot send finished (reject = failed)
  CheckQuorum = 'CheckQuorum', // local
  TransferLeader = 'TransferLeader',
  TimeoutNow = 'TimeoutNow',
  ReadIndex = 'ReadIndex',
  ReadIndexResp = 'ReadIndexResp',
}

export interface Message {
  type: MessageType;
  to: NodeId;
  from: NodeId;
  term: number;
  logTerm: number;
  index: number;
  entries: Entry[];
  commit: number;
  snapshot?: Snapshot;
  reject: boolean;
  rejectHint: number;
  /** Opaque request context (ReadIndex request ids, campaign-transfer marker). */
  context: Uint8Array;
}

/** A linearizable read point: once `index` is applied locally, the read identified by `requestCtx` may be served. */
export interface ReadState {
  index: number;
  requestCtx: Uint8Array;
}

export enum StateRole {
  Follower = 'Follower',
  PreCandidate = 'PreCandidate',
  Candidate = 'Candidate',
  Leader = 'Leader',
}

export interface SoftState {
  lead: NodeId;
  role: StateRole;
}

/** What the caller must persist, send and apply after RawNode.ready() (see server/raft/rawnode.ts for the order). */
export interface Ready {
  /** Set when leader or role changed. */
  softState?: SoftState;
  /** Set when term, vote or commit changed: persist it. */
  hardState?: HardState;
  readStates: ReadState[];
  /** Entries to append to storage before sending messages. */
  entries: Entry[];
  /** An incoming snapshot to save and apply. */
  snapshot?: Snapshot;
  /** Entries to apply to the state machine. */
  committedEntries: Entry[];
  messages: Message[];
  /** Whether the hard state and entries must reach disk (fsync) before messages go out. */
  mustSync: boolean;
}

