// --force-new-cluster, with the reference's meaning: a member that lost its quorum restarts from its own data as
// the only member. Its uncommitted tail is dropped (no one acknowledged it), and conf changes that remove every
// other member are appended and committed at once, so the member applies them at start and leads alone.
import { decodeConfChange, encodeConfChange } from '../raft/index.js';
import { ConfChangeType, EntryType, type ConfState, type Entry, type HardState } from '../raft/types.js';

export interface StandaloneLog {
  /** The committed entries kept, then the appended conf changes. */
  entries: Entry[];
  /** The conf changes appended (to be written to the WAL). */
  appended: Entry[];
  /** The hard state with the appended entries committed. */
  hardState: HardState;
  /** Index of the first uncommitted entry dropped (undefined: none dropped), and how many were. */
  discardedFrom?: number;
  discarded: number;
}

/**
 * The members the log leaves in the configuration: those of the snapshot (voters and learners), then each
 * committed conf change in order.
 */
export function membersInLog(confState: ConfState, entries: Entry[]): bigint[] {
  const ids = new Set<bigint>([...confState.voters, ...confState.learners]);
  for (const e of entries) {
    if (e.type !== EntryType.ConfChange) continue;
    const cc = decodeConfChange(e.data);
    if (cc.type === ConfChangeType.AddNode || cc.type === ConfChangeType.AddLearnerNode) ids.add(cc.nodeId);
    else if (cc.type === ConfChangeType.RemoveNode) ids.delete(cc.nodeId);
  }
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The log a member restarts from under --force-new-cluster: the committed entries, then (at the current term)
 * an AddNode of itself if the log lacks it (`selfContext`: its member record) and a RemoveNode of every other
 * member, all committed.
 */
export function standaloneLog(self: bigint, selfContext: Uint8Array, confState: ConfState, hardState: HardState, entries: Entry[]): StandaloneLog {
  const cut = entries.findIndex((e) => e.index > hardState.commit);
  const kept = cut < 0 ? entries : entries.slice(0, cut);
  const ids = membersInLog(confState, kept);
  const appended: Entry[] = [];
  let next = hardState.commit + 1;
  const add = (type: ConfChangeType, nodeId: bigint, context: Uint8Array) =>
    appended.push({ term: hardState.term, index: next++, type: EntryType.ConfChange, data: encodeConfChange({ type, nodeId, context }) });
  // Self first: the set of voters must never become empty.
  if (!ids.includes(self)) add(ConfChangeType.AddNode, self, selfContext);
  for (const id of ids) if (id !== self) add(ConfChangeType.RemoveNode, id, new Uint8Array(0));
  const all = [...kept, ...appended];
  return {
    entries: all,
    appended,
    hardState: { ...hardState, commit: all.length > 0 ? all[all.length - 1].index : hardState.commit },
    discardedFrom: cut < 0 ? undefined : entries[cut].index,
    discarded: cut < 0 ? 0 : entries.length - cut,
  };
}
