// Restore: build a new member's data dir from a snapshot file saved by `snapshot save`, so that a new cluster
// starts with the saved v3 data. This is the spec's only way back after an upgrade has completed, and the way in
// from the reference: a snapshot in its format (bbolt, from the reference 3.4/3.5 or from svc) is translated into
// svc's db; svc's older snapshots (its lmdb file) are taken as they are.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeClusterId, computeMemberId, idHex } from './ids.js';
import { openBackend } from '../storage/backend.js';
import { checkBolt } from '../storage/bbolt/reader.js';
import { looksLikeBolt } from '../storage/bbolt/page.js';
import { importBolt } from './bolt-snapshot.js';
import { createWal } from '../storage/wal.js';
import { MemoryStorage, RawNode } from '../raft/index.js';
import { encodeTagged } from '../core/requests.js';
import type { Logger } from '../log/logger.js';
import type { Member } from './membership.js';
import { CodedError } from '../coded-error.js';

export interface RestoreOptions {
  snapshotFile: string;
  dataDir: string;
  walDir?: string;
  name: string;
  initialCluster: Array<{ name: string; peerURLs: string[] }>;
  initialClusterToken: string;
  advertisePeerURLs: string[];
  /** Accept a file without the sha256 trailer (a db file copied from a data dir). */
  skipHashCheck?: boolean;
}

export class RestoreError extends CodedError<'RESTORE'> {
  constructor(message: string) {
    super('RESTORE', message);
  }
}

const DIGEST = 32;
/** Meta-page magic numbers: svc's storage engine's (lmdb, at byte 24) and the reference's bbolt (at byte 16). */
const LMDB_MAGIC = 0xbeefc0de;

/** Which database a snapshot holds: svc's older lmdb snapshots or the reference's bbolt format. */
export function snapshotFormat(db: Buffer): 'lmdb' | 'bolt' {
  if (looksLikeBolt(db)) return 'bolt';
  if (db.length >= 28 && db.readUInt32LE(24) === LMDB_MAGIC) return 'lmdb';
  throw new RestoreError('the snapshot holds neither a bbolt database (the reference\'s format) nor an svc (lmdb) database');
}

/** Check the file's trailing sha256 (written by `snapshot save`) and return the db bytes without it. */
export function verifySnapshotFile(file: string, skipHashCheck = false): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (e) {
    throw new RestoreError(`cannot read snapshot file ${file}: ${(e as Error).message}`);
  }
  const hasHash = data.length % 512 === DIGEST;
  if (!hasHash) {
    if (skipHashCheck) return data;
    throw new RestoreError(`snapshot file ${file} has no sha256 trailer (size ${data.length} is not 32 more than a multiple of 512); use --skip-hash-check to restore a db copied from a data dir`);
  }
  const db = data.subarray(0, data.length - DIGEST);
  const want = data.subarray(data.length - DIGEST);
  const got = createHash('sha256').update(db).digest();
  if (!skipHashCheck && !got.equals(want)) throw new RestoreError(`snapshot file ${file} is corrupt: its sha256 does not match its content`);
  return db;
}

/** Create `<data-dir>/member` from a snapshot for member `name` of a new cluster. Returns the new ids. */
export async function restoreSnapshot(logger: Logger, o: RestoreOptions): Promise<{ memberId: string; clusterId: string }> {
  const memberDir = join(o.dataDir, 'member');
  if (existsSync(memberDir) && readdirSync(memberDir).length > 0) throw new RestoreError(`data-dir "${o.dataDir}" exists; refusing to overwrite it (restore into a new, empty directory)`);
  const db = verifySnapshotFile(o.snapshotFile, o.skipHashCheck);
  snapshotFormat(db); // an unknown file fails before anything is created
  const members: Member[] = o.initialCluster.map((m) => ({
    id: computeMemberId(m.peerURLs, o.initialClusterToken),
    name: m.name,
    peerURLs: m.peerURLs,
    clientURLs: [],
    isLearner: false,
  }));
  const self = members.find((m) => m.name === o.name);
  if (!self) throw new RestoreError(`couldn't find local name "${o.name}" in the initial cluster configuration`);
  if ([...self.peerURLs].sort().join(',') !== [...o.advertisePeerURLs].sort().join(',')) {
    throw new RestoreError(`--initial-cluster has ${o.name}=${self.peerURLs.join(',')} but --initial-advertise-peer-urls is ${o.advertisePeerURLs.join(',')}`);
  }
  const clusterId = computeClusterId(members.map((m) => m.id));
  const snapDir = join(memberDir, 'snap');
  mkdirSync(snapDir, { recursive: true });
  const dbPath = join(snapDir, 'db');
  const format = snapshotFormat(db);
  if (format === 'lmdb') {
    writeFileSync(dbPath, db, { flag: 'wx' });
  } else {
    // the reference's format (from svc's or the reference's `snapshot save`): translated into a new svc db
    const problems = checkBolt(db);
    if (problems.length > 0) throw new RestoreError(`snapshot file ${o.snapshotFile} is not a consistent database: ${problems.slice(0, 3).join('; ')}`);
    const backend = openBackend(logger, dbPath, { batchIntervalMs: 0 });
    try {
      importBolt(db, backend);
      backend.forceCommit();
    } catch (e) {
      backend.close();
      rmSync(memberDir, { recursive: true, force: true });
      throw new RestoreError(`cannot restore snapshot file ${o.snapshotFile}: ${(e as Error).message}`);
    }
    backend.close();
  }

  // The new cluster's log starts with one conf change per member; the db must count them as applied, and the
  // old cluster's version decision does not carry over (the new members negotiate their own).
  const storage = new MemoryStorage();
  RawNode.bootstrap(storage, members.map((m) => ({ id: m.id, context: encodeTagged(m) })));
  const backend = openBackend(logger, dbPath);
  try {
    const tx = backend.batchTx();
    tx.delete('cluster', new TextEncoder().encode('clusterVersion'));
    tx.end();
    backend.setConsistentIndex(storage.lastIndex(), 1);
    backend.forceCommit();
  } finally {
    backend.close();
  }
  const wal = await createWal(logger, o.walDir ?? join(memberDir, 'wal'), encodeTagged({ memberId: self.id, clusterId }));
  try {
    await wal.save(storage.initialState().hardState, storage.entries(storage.firstIndex(), storage.lastIndex() + 1), true);
  } finally {
    await wal.close();
  }
  logger.info('restored snapshot', { path: o.snapshotFile, 'data-dir': o.dataDir, 'member-id': idHex(self.id), 'cluster-id': idHex(clusterId) });
  return { memberId: idHex(self.id), clusterId: idHex(clusterId) };
}
