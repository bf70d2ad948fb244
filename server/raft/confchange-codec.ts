// ConfChange entries carry their change encoded like etcd's raftpb.ConfChange (protobuf:
// 1 ID uint64, 2 Type enum, 3 NodeID uint64, 4 Context bytes), so logs and snapshots stay
// readable by the same tools.

import { RaftError } from './errors.js';
import type { ConfChange } from './types.js';

function putVarint(out: number[], v: bigint): void {
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

/** Encodes a ConfChange as the data of an EntryType.ConfChange entry. */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const head: number[] = [];
  head.push(0x08, 0x00); // ID = 0 (always written, as gogoproto non-nullable fields are)
  head.push(0x10);
  putVarint(head, BigInt(cc.type));
  head.push(0x18);
  putVarint(head, cc.nodeId);
  if (cc.context.length > 0) {
    head.push(0x22);
    putVarint(head, BigInt(cc.context.length));
  }
  const out = new Uint8Array(head.length + cc.context.length);
  out.set(head, 0);
  out.set(cc.context, head.length);
  return out;
}

/** Decodes the data of an EntryType.ConfChange entry. */
export function decodeConfChange(data: Uint8Array): ConfChange {
  const cc: ConfChange = { type: 0, nodeId: 0n, context: new Uint8Array(0) };
  let p = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (p >= data.length) throw new RaftError('Internal', 'truncated ConfChange');
      const b = data[p++];
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (p < data.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 2) cc.type = Number(v);
      else if (field === 3) cc.nodeId = BigInt.asUintN(64, v);
    } else if (wire === 2) {
      const len = Number(varint());
      if (p + len > data.length) throw new RaftError('Internal', 'truncated ConfChange');
      if (field === 4) cc.context = data.slice(p, p + len);
      p += len;
    } else {
      throw new RaftError('Internal', `unexpected wire type ${wire} in ConfChange`);
    }
  }
  return cc;
}
