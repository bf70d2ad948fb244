// What a runtime offers for member add/remove (spec.replicas). Optional: the planner only plans scaling steps
// with a member list, and the observation reads one only from a runtime that can scale.

/** The scaling side of a runtime. */
export interface ScalingRuntime {
  /** Peer URL member `name` is (or will be) reached at: what MemberAdd registers (reserved, if need be, durably). */
  peerURL(name: string): Promise<string>;
  /** The member a peer URL belongs to, for list entries without a name (added, never started). */
  memberOfPeerURL(url: string): string | undefined;
  /**
   * Starts member `name` (the next ordinal) for the first time, joining an existing cluster whose initial
   * cluster is `join` (member names, itself included), on an empty data dir. Idempotent.
   */
  startMember(name: string, join: string[]): Promise<void>;
  /** Stops member `name` (the highest ordinal, already out of the cluster) and deletes its data. Idempotent. */
  retireMember(name: string): Promise<void>;
}
