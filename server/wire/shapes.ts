// Messages as svc's handlers are given them and answer them, and the one conversion every decoder needs. The API
// layer's handlers and the log's request decoders (core/requests.ts) share these.
import protobuf from 'protobufjs';
import type { Encodable, Int64, MessageName, Messages } from './messages.js';

/**
 * A message as a handler is given it: decoded (64-bit integers as decimal strings, bytes as Buffers), but any field
 * may be absent, meaning its zero value: the gRPC server and the gateway pass every field, callers inside the member
 * (the Election/Lock recipes) only those they set.
 */
export type Given<T> = T extends Uint8Array ? T : T extends ReadonlyArray<infer E> ? Array<Given<E>> : T extends object ? { [K in keyof T]?: Given<T[K]> } : T;

/** A message of this name as a handler is given it. */
export type Incoming<N extends MessageName> = Given<Messages[N]>;
/** A message of this name as a handler answers it (what the encoder takes). */
export type Outgoing<N extends MessageName> = Encodable[N];

/** A 64-bit integer (decoded: a decimal string or a number; as svc's own handlers answer: also a Long) as a number; absent or empty: 0. */
export function int64ToNumber(v: Int64 | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'object') return protobuf.util.LongBits.from(v).toNumber(v.unsigned);
  return Number(v);
}
