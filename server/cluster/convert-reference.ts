// A data dir of the reference (etcd 3.4/3.5: a member's own, or one `etcdutl snapshot restore` made) converted
// once into svc's own format when svc starts on it, so that restoring with the reference's tools and starting svc
// is a migration path. The member keeps its ID, its cluster's ID, its term and vote, its membership and the
// revision of every key; the reference's files are kept, moved aside to <data-dir>/member.reference.
//
// What is read: the reference's WAL (reference-wal.ts; checksums verified) for the ids, the hard state and the
// entries the db has not applied yet, and its bbolt db (the key space, leases, auth, membership, cluster version,
// alarms, and the consistent index and term in the meta bucket). What is written, all under member.converting and
// renamed into place only when complete: svc's db (lmdb), a consensus snapshot at the db's consistent index
// holding the membership, and a WAL that starts at that snapshot, followed by the entries past it translated into
// svc's request encoding. An entry that cannot be translated stops the conversion before anything is moved.
import { existsSync, mkdirSync, openSync, closeSync, fsyncSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkBolt, readBolt, type BoltFile } from '../storage/bbolt/reader.js';
import { looksLikeBolt } from '../storage/bbolt/page.js';
import { openBackend } from '../storage/backend.js';
import { createWal } from '../storage/wal.js';
import { Snapshotter } from '../storage/snapshotter.js';
import { isReferenceWalSegment, readReferenceWal, referenceSegments, ReferenceWalError, type ReferenceWal } from '../storage/reference-wal.js';
import { pbBytes, pbNum, pbRead, pbAll } from '../storage/protobuf.js';
import { decodeConfChange, encodeConfChange } from '../raft/index.js';
import { EntryType, type ConfState, type Entry } from '../raft/types.js';
import { messageType, decodeOptions } from '../wire/index.js';
import { deleteFromPb, encodeRequest, encodeTagged, putFromPb, txnFromPb, type AlarmType, type InternalRequest } from '../core/requests.js';
import { encodeInternalState, CLUSTER_VERSION_KEY } from '../core/applier.js';
import { V2Store } from '../core/v2store.js';
import { importBolt } from './bolt-snapshot.js';
import { Membership, type Member } from './membership.js';
import { decodeDowngradeInfo, NO_DOWNGRADE, type DowngradeInfo } from './downgrade.js';
import { idHex } from './ids.js';
import { CodedError } from '../coded-error.js';
import type { Logger } from '../log/logger.js';

/** The conversion was refused or failed; the reference's files are as they were. */
export class ConvertError extends CodedError<'CONVERT_REFERENCE'> {
  constructor(message: string) {
    super('CONVERT_REFERENCE', message);
  }
}

/** Where the reference's member dir goes once converted (a number is added when taken). */
export const REFERENCE_ASIDE = 'member.reference';
const BUILDING = 'member.converting';
const BUILT = 'member.converted';

/** What the member dir of `dataDir` holds: svc's format, the reference's, or nothing yet. */
export function dataDirFormat(dataDir: string): 'svc' | 'reference' | 'none' {
  const walDir = join(dataDir, 'member', 'wal');
  const segs = referenceSegments(walDir);
  if (segs.length === 0) return 'none';
  return isReferenceWalSegment(segs[0]) ? 'reference' : 'svc';
}

const ALARMS: AlarmType[] = ['NONE', 'NOSPACE', 'CORRUPT'];
const ALARM_ACTIONS = ['GET', 'ACTIVATE', 'DEACTIVATE'] as const;
const u64 = (v: bigint) => BigInt.asUintN(64, v);

/** A request without its id (Omit distributed over the kinds). */
type RequestBody = InternalRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/** Why an entry past the db's consistent index cannot be carried over. */
class Untranslatable extends Error {}

/** The reference's member JSON ({"id":<u64>,"peerURLs":[..],"name":..,"clientURLs":[..],"isLearner":..}); the id as given. */
function parseMemberJSON(text: string, id: bigint): Member {
  // ids are uint64: read them from the key or the conf change, never through a JSON number
  const j = JSON.parse(text.replace(/"id":\s*\d+/, '"id":0')) as { peerURLs?: string[]; name?: string; clientURLs?: string[]; isLearner?: boolean };
  return { id, name: j.name ?? '', peerURLs: j.peerURLs ?? [], clientURLs: j.clientURLs ?? [], isLearner: !!j.isLearner };
}

function decodeMsg(name: string, b: Buffer): Record<string, unknown> {
  const t = messageType(name);
  return t.toObject(t.decode(b), decodeOptions) as Record<string, unknown>;
}

/** One of the reference's log entries in svc's encoding (raft's fields unchanged). */
export function translateEntry(e: Entry): Entry {
  if (e.type === EntryType.ConfChange) {
    const cc = decodeConfChange(e.data);
    if (cc.context.length === 0) return e;
    const m = parseMemberJSON(Buffer.from(cc.context).toString('utf8'), cc.nodeId);
    return { ...e, data: encodeConfChange({ ...cc, context: encodeTagged(m) }) };
  }
  if (e.data.length === 0) return e; // a new leader's empty entry
  const m = pbRead(e.data);
  // the reference still writes some entries as a bare v2 Request (member attributes, the cluster version before 3.5)
  if (isBareV2Request(m)) return translateV2(Buffer.from(e.data), u64(pbNum(m, 1)), e);
  const header = pbRead(pbBytes(m, 100));
  const id = u64(pbNum(m, 1) || pbNum(header, 1));
  const req = (r: RequestBody): Entry => ({ ...e, data: encodeRequest({ id, ...r } as InternalRequest) });
  const field = (f: number) => m.get(f)?.at(-1) as Buffer | undefined;
  let b: Buffer | undefined;
  if ((b = field(4))) return req({ kind: 'put', put: putFromPb(decodeMsg('etcdserverpb.PutRequest', b)) });
  if ((b = field(5))) return req({ kind: 'deleteRange', deleteRange: deleteFromPb(decodeMsg('etcdserverpb.DeleteRangeRequest', b)) });
  if ((b = field(6))) return req({ kind: 'txn', txn: txnFromPb(decodeMsg('etcdserverpb.TxnRequest', b)) });
  if ((b = field(7))) {
    const c = pbRead(b);
    return req({ kind: 'compaction', compaction: { revision: Number(BigInt.asIntN(64, pbNum(c, 1))), physical: pbNum(c, 2) !== 0n } });
  }
  if ((b = field(8))) {
    const g = pbRead(b);
    return req({ kind: 'leaseGrant', leaseGrant: { id: BigInt.asIntN(64, pbNum(g, 2)), ttl: Number(BigInt.asIntN(64, pbNum(g, 1))) } });
  }
  if ((b = field(9))) return req({ kind: 'leaseRevoke', leaseRevoke: { id: BigInt.asIntN(64, pbNum(pbRead(b), 1)) } });
  if ((b = field(10))) {
    const a = pbRead(b);
    return req({ kind: 'alarm', alarm: { action: ALARM_ACTIONS[Number(pbNum(a, 1))] ?? 'GET', memberId: u64(pbNum(a, 2)), alarm: ALARMS[Number(pbNum(a, 3))] ?? 'NONE' } });
  }
  // a lease checkpoint only refreshes a remaining TTL, an authenticate only issues a token: nothing to apply
  if (field(11) || field(1012)) return { ...e, data: new Uint8Array(0) };
  if ((b = field(1300))) return req({ kind: 'clusterVersionSet', clusterVersionSet: { version: minor(pbBytes(pbRead(b), 1).toString('utf8')) } });
  if ((b = field(1302))) {
    const d = pbRead(b);
    return req({ kind: 'downgradeInfoSet', downgradeInfoSet: { enabled: pbNum(d, 1) !== 0n, ver: pbBytes(d, 2).toString('utf8') } });
  }
  if ((b = field(1301))) {
    const s = pbRead(b);
    const attrs = pbRead(pbBytes(s, 2));
    return req({ kind: 'memberAttrSet', memberAttrSet: { memberId: u64(pbNum(s, 1)), name: pbBytes(attrs, 1).toString('utf8'), clientURLs: pbAll(attrs, 2).map((x) => x.toString('utf8')) } });
  }
  if ((b = field(2))) return translateV2(b, id, e);
  const fields = [...m.keys()].filter((f) => f !== 1 && f !== 100);
  throw new Untranslatable(`a request svc does not carry over (InternalRaftRequest field ${fields.join(',') || 'none'}${fields.some((f) => f >= 1000 && f < 1300) ? ': an auth change' : ''})`);
}

const V2_METHODS = new Set(['PUT', 'POST', 'DELETE', 'QGET', 'GET', 'HEAD', 'SYNC']);

/** An etcdserverpb.Request (field 2 the method, 3 the path) rather than an InternalRaftRequest (2 a message). */
function isBareV2Request(m: Map<number, (bigint | Buffer)[]>): boolean {
  const method = m.get(2)?.at(-1);
  return Buffer.isBuffer(method) && V2_METHODS.has(method.toString('latin1'));
}

/** The reference's v2 requests: the cluster version and member attributes as 3.4 wrote them, other v2 writes. */
function translateV2(b: Buffer, id: bigint, e: Entry): Entry {
  const r = pbRead(b);
  const method = pbBytes(r, 2).toString('utf8');
  const path = pbBytes(r, 3).toString('utf8');
  const val = pbBytes(r, 4).toString('utf8');
  const req = (x: RequestBody): Entry => ({ ...e, data: encodeRequest({ id, ...x } as InternalRequest) });
  if (method === 'PUT' && path === '/0/version') return req({ kind: 'clusterVersionSet', clusterVersionSet: { version: minor(val) } });
  const attr = /^\/0\/members\/([0-9a-f]+)\/attributes$/.exec(path);
  if (method === 'PUT' && attr) {
    const a = JSON.parse(val) as { name?: string; clientURLs?: string[] };
    return req({ kind: 'memberAttrSet', memberAttrSet: { memberId: BigInt('0x' + attr[1]), name: a.name ?? '', clientURLs: a.clientURLs ?? [] } });
  }
  if (method !== 'PUT' && method !== 'DELETE') throw new Untranslatable(`a v2 ${method} request`);
  const prevExist = r.get(8)?.at(-1);
  return req({
    kind: 'v2',
    v2: { method, path, value: val, dir: pbNum(r, 5) !== 0n, recursive: pbNum(r, 12) !== 0n, prevExist: typeof prevExist === 'bigint' ? prevExist !== 0n : undefined },
  });
}

/** "3.5.0" -> "3.5" (svc keeps cluster versions as major.minor). */
function minor(v: string): string {
  return v.split('.').slice(0, 2).join('.');
}

interface ReferenceDb {
  file: BoltFile;
  bytes: Buffer;
  consistentIndex: number;
  term: number | undefined;
  members: Member[];
  removed: bigint[];
  clusterVersion: string | undefined;
  downgrade: DowngradeInfo;
  alarms: Array<{ memberId: bigint; alarm: AlarmType }>;
}

function readReferenceDb(path: string): ReferenceDb {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new ConvertError(`cannot read the reference's database ${path}: ${(e as Error).message}`);
  }
  if (!looksLikeBolt(bytes)) throw new ConvertError(`${path} is not a bbolt database (the reference's format), though the WAL beside it is the reference's`);
  const problems = checkBolt(bytes);
  if (problems.length > 0) throw new ConvertError(`the reference's database ${path} fails its consistency check: ${problems.slice(0, 3).join('; ')}`);
  const file = readBolt(bytes);
  const bucket = (name: string) => file.buckets.find((b) => b.name.toString('latin1') === name)?.kvs ?? [];
  const meta = new Map(bucket('meta').map((kv) => [kv.key.toString('latin1'), kv.value]));
  const ci = meta.get('consistent_index');
  const term = meta.get('term');
  const members = bucket('members').map((kv) => parseMemberJSON(kv.value.toString('utf8'), BigInt('0x' + kv.key.toString('latin1'))));
  const removed = bucket('members_removed').map((kv) => BigInt('0x' + kv.key.toString('latin1')));
  const cv = bucket('cluster').find((kv) => kv.key.toString('latin1') === 'clusterVersion')?.value.toString('utf8');
  const downgrade = bucket('cluster').find((kv) => kv.key.toString('latin1') === 'downgrade')?.value.toString('utf8');
  const alarms = bucket('alarm').map((kv) => {
    const a = pbRead(kv.key);
    return { memberId: u64(pbNum(a, 1)), alarm: ALARMS[Number(pbNum(a, 2))] ?? 'NONE' };
  });
  return {
    file,
    bytes,
    consistentIndex: ci && ci.length === 8 ? Number(ci.readBigUInt64BE(0)) : 0,
    term: term && term.length === 8 ? Number(term.readBigUInt64BE(0)) : undefined,
    members,
    removed,
    clusterVersion: cv ? minor(cv) : undefined,
    downgrade: downgrade ? decodeDowngradeInfo(downgrade) : NO_DOWNGRADE,
    alarms: alarms.filter((a) => a.alarm !== 'NONE'),
  };
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The pid holding a lock on `file` (the reference's etcd flocks its db and WAL), from /proc/locks; -1 when unknown. */
export function fileLockHolder(file: string): number | undefined {
  let locks: string;
  let ino: string;
  try {
    locks = readFileSync('/proc/locks', 'utf8');
    ino = String(statSync(file).ino);
  } catch {
    return undefined;
  }
  for (const line of locks.split('\n')) {
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (an OFD lock's pid is -1)
    const f = line.trim().split(/\s+/);
    const at = f.findIndex((x) => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(x));
    if (at > 0 && f[at].split(':')[2] === ino) return Number(f[at - 1]) || -1;
  }
  return undefined;
}

/** Finishes or undoes a conversion a crash interrupted: what is left is either the reference's dir or svc's. */
export function recoverInterrupted(logger: Logger, dataDir: string): void {
  const member = join(dataDir, 'member');
  const building = join(dataDir, BUILDING);
  const built = join(dataDir, BUILT);
  if (existsSync(building)) rmSync(building, { recursive: true, force: true });
  if (existsSync(built)) {
    if (existsSync(member)) {
      rmSync(built, { recursive: true, force: true }); // the reference's dir was not moved yet: convert again
    } else {
      renameSync(built, member);
      fsyncDir(dataDir);
      logger.info('finished an interrupted conversion of a reference data dir', { 'data-dir': dataDir });
    }
  }
}

export interface ConvertResult {
  memberId: bigint;
  clusterId: bigint;
  movedTo: string;
}

/**
 * Converts the reference's member dir under `dataDir` into svc's (see the header). Throws ConvertError, with the
 * reference's files untouched, when it cannot.
 */
export async function convertReferenceDataDir(logger: Logger, dataDir: string): Promise<ConvertResult> {
  recoverInterrupted(logger, dataDir);
  const member = join(dataDir, 'member');
  const walDir = join(member, 'wal');
  const dbPath = join(member, 'snap', 'db');
  const wayOut = `Nothing was changed in ${member}.`;
  const segs = referenceSegments(walDir);
  const holder = fileLockHolder(dbPath) ?? (segs.length > 0 ? fileLockHolder(segs[segs.length - 1]) : undefined);
  if (holder !== undefined) throw new ConvertError(`the reference's data dir ${dataDir} is in use by process ${holder < 0 ? '(unknown pid)' : holder} (a running etcd?): stop it before starting svc on this data dir. ${wayOut}`);
  let wal: ReferenceWal;
  try {
    wal = readReferenceWal(walDir);
  } catch (e) {
    if (e instanceof ReferenceWalError) {
      throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: its WAL is corrupt: ${e.message}. ${wayOut} Restore the member from a snapshot (etcdutl snapshot restore, or svcctl snapshot restore) or replace it (member remove, member add)`);
    }
    throw e;
  }
  if (!existsSync(dbPath)) throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: ${dbPath} is missing. ${wayOut}`);
  const db = readReferenceDb(dbPath);
  const ci = db.consistentIndex;
  if (ci === 0) throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: its database records no applied index (consistent_index). ${wayOut}`);
  const ciTerm = db.term ?? wal.entries.find((e) => e.index === ci)?.term ?? wal.snapshots.find((s) => s.index === ci)?.term;
  if (ciTerm === undefined) throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: the term of its applied index ${ci} is in neither its database nor its WAL. ${wayOut}`);
  if (wal.tornTail) logger.warn('the reference\'s WAL ends in a torn record (a write never completed); reading up to it', { where: wal.tornTail });

  // the entries the db has not applied: translated, or the conversion stops here
  const pending = wal.entries.filter((e) => e.index > ci);
  if (pending.length > 0 && pending[0].index !== ci + 1) {
    throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: its WAL starts at entry ${pending[0].index} but its database has applied only up to ${ci}. ${wayOut}`);
  }
  const translated: Entry[] = [];
  for (const e of pending) {
    try {
      translated.push(translateEntry(e));
    } catch (err) {
      const why = err instanceof Untranslatable ? err.message : `an undecodable entry (${(err as Error).message})`;
      throw new ConvertError(
        `cannot convert the reference's data dir ${dataDir}: its WAL holds entry ${e.index}, not yet applied to its database, with ${why}. ${wayOut} ` +
          'Start the reference etcd on this data dir once and stop it cleanly (it applies its log to its database), then start svc on it',
      );
    }
  }

  const membership = new Membership(wal.clusterId);
  for (const m of db.members) membership.add(m);
  for (const id of db.removed) membership.removed.add(id);
  membership.version = db.clusterVersion;
  membership.downgrade = db.downgrade;
  if (membership.list().length === 0) throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: its database lists no members (a data dir of etcd before 3.4?). ${wayOut}`);
  if (!membership.member(wal.memberId) && !membership.removed.has(wal.memberId)) {
    throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: its member ${idHex(wal.memberId)} is not among the members its database lists (${membership.list().map((m) => idHex(m.id)).join(', ')}). ${wayOut}`);
  }
  const confState: ConfState = { voters: membership.voters().map((m) => m.id), learners: membership.list().filter((m) => m.isLearner).map((m) => m.id) };
  const last = translated.at(-1)?.index ?? ci;
  const hardState = { term: Math.max(wal.hardState.term, ciTerm), vote: wal.hardState.vote, commit: Math.max(ci, Math.min(wal.hardState.commit, last)) };

  const building = join(dataDir, BUILDING);
  rmSync(building, { recursive: true, force: true });
  try {
    const snapDir = join(building, 'snap');
    mkdirSync(snapDir, { recursive: true, mode: 0o700 });
    const backend = openBackend(logger, join(snapDir, 'db'), { batchIntervalMs: 0 });
    try {
      importBolt(db.bytes, backend);
      const tx = backend.batchTx();
      if (db.clusterVersion) tx.put('cluster', CLUSTER_VERSION_KEY, Buffer.from(db.clusterVersion));
      tx.end();
      backend.setConsistentIndex(ci, ciTerm);
      backend.forceCommit();
    } finally {
      backend.close();
    }
    await new Snapshotter(logger, snapDir).save({
      metadata: { index: ci, term: ciTerm, confState },
      data: encodeInternalState({ membership, v2: new V2Store(), alarms: db.alarms }),
    });
    const w = await createWal(logger, join(building, 'wal'), encodeTagged({ memberId: wal.memberId, clusterId: wal.clusterId }));
    try {
      await w.saveSnapshot({ index: ci, term: ciTerm, confState });
      await w.save(hardState, translated, true);
    } finally {
      await w.close();
    }
    fsyncDir(building);
    renameSync(building, join(dataDir, BUILT));
    fsyncDir(dataDir);
  } catch (e) {
    rmSync(building, { recursive: true, force: true });
    if (e instanceof ConvertError) throw e;
    throw new ConvertError(`cannot convert the reference's data dir ${dataDir}: ${(e as Error).message}. ${wayOut}`);
  }
  let aside = join(dataDir, REFERENCE_ASIDE);
  for (let n = 2; existsSync(aside); n++) aside = join(dataDir, `${REFERENCE_ASIDE}.${n}`);
  renameSync(member, aside);
  renameSync(join(dataDir, BUILT), member);
  fsyncDir(dataDir);
  const revision = db.file.buckets.find((b) => b.name.toString('latin1') === 'key')?.kvs.at(-1)?.key.readBigUInt64BE(0) ?? 0n;
  logger.warn('converted a data dir of the reference (etcd) into svc\'s format; the original files are kept', {
    'data-dir': dataDir,
    'original-moved-to': aside,
    'local-member-id': idHex(wal.memberId),
    'cluster-id': idHex(wal.clusterId),
    'consistent-index': ci,
    term: hardState.term,
    revision: Number(revision),
    members: membership.list().length,
    'wal-entries-to-apply': translated.length,
  });
  return { memberId: wal.memberId, clusterId: wal.clusterId, movedTo: aside };
}
