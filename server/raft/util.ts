// Small helpers shared inside server/raft: message construction, sizes, context keys.

import type { Entry, Message, NodeId } from './types.js';
import { MessageType, NONE } from './types.js';

const EMPTY = new Uint8Array(0);

/** A message with every field defaulted, overridden by `m`. */
export function newMessage(m: Partial<Message> & { type: MessageType }): Message {
  return {
    type: m.type,
    to: m.to ?? NONE,
    from: m.from ?? NONE,
    term: m.term ?? 0,
    logTerm: m.logTerm ?? 0,
    index: m.index ?? 0,
    entries: m.entries ?? [],
    commit: m.commit ?? 0,
    snapshot: m.snapshot,
    reject: m.reject ?? false,
    rejectHint: m.rejectHint ?? 0,
    context: m.context ?? EMPTY,
  };
}

/** Approximate encoded size of an entry (payload plus fixed overhead), for maxSizePerMsg. */
export function entrySize(e: Entry): number {
  return e.data.length + 16;
}

/** The longest prefix of ents whose total size is within maxBytes (always at least one entry). */
export function limitSize(ents: Entry[], maxBytes: number): Entry[] {
  if (ents.length === 0 || maxBytes === Infinity) return ents;
  let size = entrySize(ents[0]);
  let n = 1;
  for (; n < ents.length; n++) {
    size += entrySize(ents[n]);
    if (size > maxBytes) break;
  }
  return n === ents.length ? ents : ents.slice(0, n);
}

const LOCAL_MSGS: ReadonlySet<MessageType> = new Set([MessageType.Hup, MessageType.Beat, MessageType.Unreachable, MessageType.SnapStatus, MessageType.CheckQuorum]);
const RESPONSE_MSGS: ReadonlySet<MessageType> = new Set([MessageType.AppResp, MessageType.VoteResp, MessageType.HeartbeatResp, MessageType.Unreachable, MessageType.PreVoteResp]);

/** Messages that only the local node may feed to step(). */
export function isLocalMsg(t: MessageType): boolean {
  return LOCAL_MSGS.has(t);
}

/** Messages that answer a request of ours. */
export function isResponseMsg(t: MessageType): boolean {
  return RESPONSE_MSGS.has(t);
}

/** A Map key for an opaque context (byte-exact). */
export function ctxKey(ctx: Uint8Array): string {
  let s = '';
  for (let i = 0; i < ctx.length; i++) s += String.fromCharCode(ctx[i]);
  return s;
}

/** Byte equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Hex form of a member id, as logs print it. */
export function idHex(id: NodeId): string {
  return id.toString(16);
}
