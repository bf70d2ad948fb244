// Snapshots in the reference's format. The reference's snapshot is its bbolt database file (plus a trailing
// sha256); svc keeps its data in lmdb with its own value encodings. This module translates between the two,
// bucket by bucket: svc -> reference when a snapshot is saved (the Maintenance.Snapshot stream), reference ->
// svc when one is restored, and computes `snapshot status` the way the reference's tool does.
//
// Bucket by bucket (reference encodings, facts from its sources):
//   key      rev key (8-byte main, '_', 8-byte sub, 't' when a tombstone) -> mvccpb.KeyValue (a tombstone: key only)
//   meta     consistent_index, term (3.5), scheduled/finishedCompactRev: the same bytes in both
//   lease    8-byte big-endian id -> leasepb.Lease {ID, TTL, RemainingTTL}
//   auth     authEnabled (one byte), authRevision (u64 BE): the same bytes in both
//   authUsers / authRoles   name -> authpb.User / authpb.Role (svc keeps JSON)
//   members / members_removed   hex id -> member JSON / "removed" (svc keeps membership beside the db)
//   cluster  clusterVersion -> "3.4.0";  alarm  pb.AlarmMember -> empty (svc keeps alarms beside the db)
import { closeSync, openSync, rmSync, writeSync, createReadStream, ftruncateSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { setImmediate as tick } from 'node:timers/promises';
import { BoltFileWriter, type BucketWriter } from '../storage/bbolt/writer.js';
import { readBolt, checkBolt, type BoltBucket } from '../storage/bbolt/reader.js';
import { openBackend, BUCKETS, type Backend, type BucketName, type OpenSnapshot } from '../storage/backend.js';
import { encodeKv, referenceKvBytes } from '../mvcc/kv.js';
import { nopLogger } from '../log/logger.js';
import { crc32c } from '../storage/crc.js';
import { PbWriter, pbRead, pbAll as all, pbBytes as bytes, pbInt64 as int64, pbNum as num } from '../storage/protobuf.js';

export { crc32c } from '../storage/crc.js';
import type { Member } from './membership.js';

// ------------------------------------------------------------------------------------------- protobuf



// ------------------------------------------------------------------------------------ value translation

const PERM_TYPES = ['READ', 'WRITE', 'READWRITE'] as const;
const ALARM_TYPES = ['NONE', 'NOSPACE', 'CORRUPT'] as const;
const TOMBSTONE_MARK = 0x74; // 't'

function isTombstoneKey(k: Uint8Array): boolean {
  return k.byteLength === 18 && k[17] === TOMBSTONE_MARK;
}

interface SvcUserJSON {
  name: string;
  password: string;
  roles: string[];
}
interface SvcRoleJSON {
  name: string;
  perms: Array<{ permType: (typeof PERM_TYPES)[number]; key: string; rangeEnd: string }>;
}

/** An svc value as the reference stores it; undefined drops the entry. */
export function toReference(bucket: string, key: Uint8Array, value: Uint8Array): Uint8Array | undefined {
  switch (bucket) {
    case 'key':
      return referenceKvBytes(value, isTombstoneKey(key));
    case 'lease': {
      const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      return new PbWriter().int(1, b.readBigInt64BE(0)).int(2, b.readBigInt64BE(8)).int(3, b.readBigInt64BE(16)).done();
    }
    case 'authUsers': {
      const u = JSON.parse(Buffer.from(value).toString('utf8')) as SvcUserJSON;
      const w = new PbWriter().bytes(1, u.name).bytes(2, Buffer.from(u.password, 'latin1'));
      for (const r of u.roles) w.bytes(3, r, true);
      // a user without password carries UserAddOptions{no_password: true}
      if (u.password === '') w.bytes(4, new PbWriter().int(1, true).done(), true);
      return w.done();
    }
    case 'authRoles': {
      const r = JSON.parse(Buffer.from(value).toString('utf8')) as SvcRoleJSON;
      const w = new PbWriter().bytes(1, r.name);
      for (const p of r.perms) {
        const perm = new PbWriter().int(1, PERM_TYPES.indexOf(p.permType)).bytes(2, Buffer.from(p.key, 'base64')).bytes(3, Buffer.from(p.rangeEnd, 'base64')).done();
        w.bytes(2, perm, true);
      }
      return w.done();
    }
    case 'v2':
      return undefined; // the reference keeps v2 data outside its db (and its restore drops it)
    default:
      return value;
  }
}

/** A reference value as svc stores it; undefined drops the entry. */
export function fromReference(bucket: string, key: Uint8Array, value: Uint8Array): Uint8Array | undefined {
  switch (bucket) {
    case 'key': {
      const m = pbRead(value);
      const k = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
      const main = k.length >= 8 ? Number(k.readBigUInt64BE(0)) : 0;
      if (isTombstoneKey(key)) return encodeKv({ key: bytes(m, 1), value: new Uint8Array(0), createRevision: 0, modRevision: main, version: 0, lease: 0n });
      return encodeKv({ key: bytes(m, 1), createRevision: int64(num(m, 2)), modRevision: int64(num(m, 3)), version: int64(num(m, 4)), value: bytes(m, 5), lease: BigInt.asIntN(64, num(m, 6)) });
    }
    case 'lease': {
      const m = pbRead(value);
      const b = Buffer.alloc(24);
      b.writeBigInt64BE(BigInt.asIntN(64, num(m, 1)), 0);
      b.writeBigInt64BE(BigInt.asIntN(64, num(m, 2)), 8);
      b.writeBigInt64BE(BigInt.asIntN(64, num(m, 3)), 16);
      return b;
    }
    case 'authUsers': {
      const m = pbRead(value);
      const u: SvcUserJSON = { name: bytes(m, 1).toString('utf8'), password: bytes(m, 2).toString('latin1'), roles: all(m, 3).map((r) => r.toString('utf8')) };
      return Buffer.from(JSON.stringify(u));
    }
    case 'authRoles': {
      const m = pbRead(value);
      const r: SvcRoleJSON = {
        name: bytes(m, 1).toString('utf8'),
        perms: all(m, 2).map((p) => {
          const pm = pbRead(p);
          return { permType: PERM_TYPES[Number(num(pm, 1))] ?? 'READ', key: bytes(pm, 2).toString('base64'), rangeEnd: bytes(pm, 3).toString('base64') };
        }),
      };
      return Buffer.from(JSON.stringify(r));
    }
    // membership and alarms come from the restore's configuration; the new cluster decides its version
    case 'members':
    case 'members_removed':
    case 'alarm':
      return undefined;
    case 'cluster':
      return undefined;
    case 'meta': {
      const name = Buffer.from(key).toString('latin1');
      return name === 'confState' ? undefined : value; // 3.5's conf state is the old cluster's
    }
    default:
      return value;
  }
}

/** The reference's member record: {"id":<u64>,"peerURLs":[..],"isLearner":true?,"name":..?,"clientURLs":[..]?}. */
export function memberJSON(m: Member): string {
  const parts = [`"id":${m.id.toString()}`, `"peerURLs":${JSON.stringify(m.peerURLs)}`];
  if (m.isLearner) parts.push('"isLearner":true');
  if (m.name) parts.push(`"name":${JSON.stringify(m.name)}`);
  if (m.clientURLs.length > 0) parts.push(`"clientURLs":${JSON.stringify(m.clientURLs)}`);
  return `{${parts.join(',')}}`;
}

// ------------------------------------------------------------------------------------------- saving

/** What lives beside svc's db but in the reference's. */
export interface SnapshotExtras {
  members: Member[];
  removed: bigint[];
  alarms: Array<{ memberId: bigint; alarm: string }>;
  /** Keep meta's "term" (the reference writes it from 3.5 on). */
  metaTerm: boolean;
}

/** The buckets the reference's db always has (written even when empty). */
const REFERENCE_BUCKETS = ['alarm', 'auth', 'authRoles', 'authUsers', 'cluster', 'key', 'lease', 'members', 'members_removed', 'meta'];
const RENDER_CHUNK = 5000;

/**
 * Renders svc's db file `lmdbFile` (a consistent copy nobody writes to) as a bbolt file at `out`, page by page.
 * Returns its size and sha256.
 */
export async function renderBoltFile(lmdbFile: string, out: string, extras: SnapshotExtras): Promise<{ size: number; sha256: string }> {
  const backend = openBackend(nopLogger, lmdbFile, { batchIntervalMs: 0 });
  const fd = openSync(out, 'w');
  let size: number;
  try {
    const w = new BoltFileWriter({ write: (pgid, data) => void writeSync(fd, data, 0, data.length, pgid * w.pageSize) });
    const names = [...new Set<string>([...REFERENCE_BUCKETS, ...BUCKETS])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const values: Array<{ name: Uint8Array; value: Uint8Array }> = [];
    for (const name of names) {
      if (name === 'v2') continue;
      const bw = w.bucket();
      if (name === 'members') {
        const ms = [...extras.members].sort((a, b) => Buffer.compare(Buffer.from(a.id.toString(16)), Buffer.from(b.id.toString(16))));
        for (const m of ms) bw.put(Buffer.from(m.id.toString(16)), Buffer.from(memberJSON(m)));
      } else if (name === 'members_removed') {
        const ids = extras.removed.map((id) => id.toString(16)).sort();
        for (const id of ids) bw.put(Buffer.from(id), Buffer.from('removed'));
      } else if (name === 'alarm') {
        const keys = extras.alarms
          .map((a) => new PbWriter().int(1, a.memberId).int(2, Math.max(0, ALARM_TYPES.indexOf(a.alarm as (typeof ALARM_TYPES)[number]))).done())
          .sort(Buffer.compare);
        for (const k of keys) bw.put(k, new Uint8Array(0));
      } else {
        await renderBucket(backend, name, bw, extras);
      }
      values.push({ name: Buffer.from(name), value: bw.finish() });
    }
    size = w.finish(values);
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
    backend.close();
    rmSync(`${lmdbFile}-lock`, { force: true });
  }
  const sha = createHash('sha256');
  for await (const chunk of createReadStream(out)) sha.update(chunk as Buffer);
  return { size, sha256: sha.digest('hex') };
}

async function renderBucket(backend: Backend, name: BucketName, bw: BucketWriter, extras: SnapshotExtras): Promise<void> {
  const tx = backend.readTx();
  let start: Uint8Array = new Uint8Array(0);
  for (;;) {
    const chunk = tx.range(name, start, null, RENDER_CHUNK);
    for (const { key, value } of chunk) {
      if (name === 'meta' && !extras.metaTerm && Buffer.from(key).toString('latin1') === 'term') continue;
      const v = toReference(name, key, value);
      if (v !== undefined) bw.put(key, v);
    }
    if (chunk.length < RENDER_CHUNK) return;
    const last = chunk[chunk.length - 1].key;
    start = new Uint8Array(last.byteLength + 1);
    start.set(last);
    await tick(); // the copy is private: let requests be served between chunks
  }
}

let snapSeq = 0;

/**
 * A consistent copy of `backend` in the reference's format, for the Maintenance.Snapshot stream: svc's copy of
 * its db goes to a temporary file, is rendered as a bbolt file beside it (page by page, not in memory), and the
 * chunks come from that file; close() (or the end of the chunks) removes it.
 */
export async function openBoltSnapshot(backend: Backend, extras: SnapshotExtras, chunkSize = 32 * 1024): Promise<OpenSnapshot> {
  // names the backend's stale-temp cleanup knows (".snapshot-...tmp")
  const base = `${backend.path}.snapshot-${process.pid}-bolt${++snapSeq}`;
  const copy = `${base}.tmp`;
  const out = `${base}.bolt.tmp`;
  const cleanup = () => {
    rmSync(copy, { force: true });
    rmSync(`${copy}-lock`, { force: true });
  };
  let info: { size: number; sha256: string };
  try {
    await backend.snapshotTo(copy);
    info = await renderBoltFile(copy, out, extras);
  } catch (err) {
    rmSync(out, { force: true });
    throw err;
  } finally {
    cleanup();
  }
  const close = () => rmSync(out, { force: true });
  async function* chunks(): AsyncIterable<Uint8Array> {
    try {
      for await (const c of createReadStream(out, { highWaterMark: chunkSize })) yield c as Buffer;
    } finally {
      close();
    }
  }
  return { ...info, chunks: chunks(), close };
}

// ------------------------------------------------------------------------------------------ restoring

/** Is `db` a bbolt file (meta page 0's magic at byte 16)? */
export { looksLikeBolt } from '../storage/bbolt/page.js';

/** Writes the buckets of a reference db (svc's or the reference's snapshot) into an svc backend, translated. */
export function importBolt(db: Buffer, backend: Backend): { buckets: number; keys: number } {
  const problems = checkBolt(db);
  if (problems.length > 0) throw new Error(`the snapshot's database fails its consistency check: ${problems.slice(0, 5).join('; ')}`);
  const file = readBolt(db);
  let keys = 0;
  const tx = backend.batchTx();
  for (const b of file.buckets) {
    const name = b.name.toString('latin1');
    for (const { key, value } of b.kvs) {
      const v = fromReference(name, key, value);
      if (v === undefined) continue;
      tx.put(name, Uint8Array.from(key), Uint8Array.from(v));
      keys++;
      if (keys % 10000 === 0) {
        tx.end();
        backend.forceCommit();
      }
    }
  }
  tx.end();
  return { buckets: file.buckets.length, keys };
}

// ------------------------------------------------------------------------------------------- status

export interface BoltStatus {
  hash: number;
  revision: number;
  totalKey: number;
  totalSize: number;
}

/**
 * `snapshot status` as the reference computes it: the consistency check, then CRC-32C over every bucket's name,
 * keys and values (buckets and keys in order), the last revision of the key bucket, the number of keys, and the
 * size of the pages in use (high-water mark times page size).
 */
export function boltStatus(db: Buffer): BoltStatus {
  const problems = checkBolt(db);
  if (problems.length > 0) throw new Error(`snapshot file integrity check failed. ${problems.length} errors found.\n${problems.join('\n')}`);
  const file = readBolt(db);
  let h = 0;
  let revision = 0;
  let totalKey = 0;
  const visit = (b: BoltBucket) => {
    for (const kv of b.kvs) {
      h = crc32c(kv.key, h);
      h = crc32c(kv.value, h);
      if (b.name.toString('latin1') === 'key' && kv.key.length >= 8) revision = Number(kv.key.readBigUInt64BE(0));
      totalKey++;
    }
  };
  for (const b of file.buckets) {
    h = crc32c(b.name, h);
    visit(b);
  }
  return { hash: h >>> 0, revision, totalKey, totalSize: file.meta.pgid * file.meta.pageSize };
}
