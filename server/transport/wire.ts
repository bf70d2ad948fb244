// Names shared by the sending and receiving side of the peer wire: paths, headers, id formatting, errors.

import type { NodeId } from '../raft/types.js';

/** A long-lived stream of frames from the member named in the last path segment (hex id). */
export const PATH_STREAM_PREFIX = '/raft/stream/';
/** One MsgSnap per request: the body is one encoded Message. */
export const PATH_SNAPSHOT = '/raft/snapshot';

// The reference's header names, kept so that captures of both look alike.
export const HEADER_CLUSTER_ID = 'x-etcd-cluster-id';
export const HEADER_FROM = 'x-server-from';
export const HEADER_TO = 'x-raft-to';

/** The stream type named in log fields (the reference's name for its general-purpose stream). */
export const STREAM_TYPE = 'stream Message';

/** Member and cluster ids are printed as unpadded lowercase hex, like the reference. */
export function idHex(id: bigint): string {
  return id.toString(16);
}

/** Parses a hex id; undefined when malformed or out of the 64-bit range. */
export function parseIdHex(s: string | undefined): NodeId | undefined {
  if (!s || !/^[0-9a-fA-F]{1,16}$/.test(s)) return undefined;
  return BigInt('0x' + s);
}

export type TransportErrorCode =
  | 'ERR_PEER_LISTEN' // a listen-peer-url could not be bound
  | 'ERR_PEER_URL' // a peer URL is malformed or of an unsupported scheme
  | 'ERR_TRANSPORT_STOPPED';

/** Errors the transport and peer server raise to their callers. */
export class TransportError extends Error {
  constructor(
    readonly code: TransportErrorCode,
    message: string,
    readonly url?: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
