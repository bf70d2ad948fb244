// Member and cluster ids. Both are 64-bit values derived from configuration, so every member computes the same
// ids for the same --initial-cluster and --initial-cluster-token without talking to the others.
import { createHash } from 'node:crypto';
import type { NodeId } from '../raft/types.js';

function first8(bytes: Buffer): bigint {
  return bytes.readBigUInt64BE(0);
}

/** A member's id: a hash of its sorted peer URLs and the cluster token (plus a time for members added later). */
export function computeMemberId(peerUrls: string[], token: string, addedAtMs?: number): NodeId {
  const h = createHash('sha1');
  h.update([...peerUrls].sort().join(''));
  h.update(token);
  if (addedAtMs !== undefined) h.update(String(addedAtMs));
  const id = first8(h.digest());
  return id === 0n ? 1n : id;
}

/** The cluster id: a hash of the sorted ids of the bootstrapping members. */
export function computeClusterId(memberIds: NodeId[]): bigint {
  const sorted = [...memberIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const buf = Buffer.alloc(8 * sorted.length);
  sorted.forEach((id, i) => buf.writeBigUInt64BE(id, 8 * i));
  return first8(createHash('sha1').update(buf).digest());
}

/** Ids are printed as lower-case hex without leading zeros, as the reference does. */
export function idHex(id: bigint): string {
  return id.toString(16);
}

export function parseIdHex(s: string): bigint {
  if (!/^[0-9a-fA-F]{1,16}$/.test(s)) throw new Error(`invalid member id "${s}": expected up to 16 hex digits`);
  return BigInt('0x' + s);
}
