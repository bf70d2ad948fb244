// Backups in destinations: open one from the spec (credentials and CA from a secret source the runtime hands in),
// upload a full snapshot with its manifest, list the restore points, apply retention, download a restore point and
// check it. The layout and the choices are pure (../restore-points.ts); this is the I/O around them.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { BackupDestination, S3Destination, SvcClusterSpec } from '../../api/types.js';
import { durationMs } from '../../api/duration.js';
import {
  clusterFolder, clustersIn, deltaKey, fullManifest, fullSnapshotKey, manifestKeyOf, parseDeltaKey, parseManifest, retainFull, segmentsToRemove,
  type FullManifest, type RestorePoint, type SegmentRef,
} from '../restore-points.js';
import { decodeSegment, encodeSegment, type DeltaSegment } from '../delta.js';
import { DEFAULT_KEEP } from '../schedule.js';
import { S3Store, type S3Credentials } from './s3.js';
import { DestinationError, type ObjectStore } from './store.js';

export { DestinationError, type DestinationCause, type ObjectStore } from './store.js';
export { S3Store, classify, type S3Credentials } from './s3.js';

/**
 * Where a runtime finds secrets: the value of `key` in Secret `secret`, or undefined. Kubernetes: the Job's
 * environment (the Secret as env vars); locally: the folder <secrets dir>/<secret>/<key>, as a mounted Secret.
 */
export type SecretReader = (secret: string, key: string) => string | undefined;

/** How a runtime opens destinations. */
export interface DestinationAccess {
  secrets: SecretReader;
  /** Where secrets are looked for, as messages name it ("the folder ~/.config/svc-operator/secrets", "the Job's environment"). */
  secretsWhere?: string;
  /** Credentials when a destination names no credentialsSecret (the AWS_* variables of the operator's environment). */
  defaultCredentials?: S3Credentials;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
}

/** A destination ready to use: its spec, its prefix and its store. */
export interface OpenDestination {
  name: string;
  prefix?: string;
  store: ObjectStore;
}

/** The S3 destinations of a spec (pvc destinations are the Kubernetes runtime's claims). */
export function s3Destinations(spec: SvcClusterSpec): Array<BackupDestination & { s3: S3Destination }> {
  return (spec.backup?.destinations ?? []).filter((d): d is BackupDestination & { s3: S3Destination } => d.s3 !== undefined);
}

/** Opens an S3 destination; a credentials secret that is not there is a DestinationError naming it. */
export function openS3(name: string, s3: S3Destination, access: DestinationAccess): OpenDestination {
  const label = `"${name}" (s3://${s3.bucket}${s3.prefix ? `/${s3.prefix}` : ''})`;
  let credentials = access.defaultCredentials;
  if (s3.credentialsSecret) {
    const id = access.secrets(s3.credentialsSecret, 'accessKeyId');
    const secret = access.secrets(s3.credentialsSecret, 'secretAccessKey');
    if (!id || !secret) throw new DestinationError(label, 'NoCredentials', `credentialsSecret ${s3.credentialsSecret} has no accessKeyId and secretAccessKey${access.secretsWhere ? ` in ${access.secretsWhere}` : ''}; create it with both keys`);
    const token = access.secrets(s3.credentialsSecret, 'sessionToken');
    credentials = { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) };
  }
  if (!credentials) throw new DestinationError(label, 'NoCredentials', 'no credentials: name a credentialsSecret (keys accessKeyId, secretAccessKey), or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the operator');
  let ca = s3.caBundle;
  if (s3.caSecret) {
    ca = access.secrets(s3.caSecret, 'ca.crt');
    if (!ca) throw new DestinationError(label, 'NoCredentials', `caSecret ${s3.caSecret} has no ca.crt${access.secretsWhere ? ` in ${access.secretsWhere}` : ''}`);
  }
  return { name, prefix: s3.prefix, store: new S3Store({ name, spec: s3, credentials, ca, timeoutMs: access.timeoutMs }) };
}

/** What is known of a snapshot file to upload (its record and what the engine learned at the time). */
export type FullSnapshotInput = Omit<FullManifest, 'format' | 'kind' | 'snapshot'>;

/** Uploads a full snapshot file, then its manifest (so a manifest always has its snapshot); returns the point. */
export async function uploadFull(d: OpenDestination, file: string, m: FullSnapshotInput): Promise<RestorePoint> {
  const key = fullSnapshotKey(d.prefix, m.cluster, m.revision, m.time);
  const manifest = fullManifest(m, key);
  await d.store.putFile(key, file);
  await d.store.put(manifestKeyOf(key), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  return { ...manifest, key, manifestKey: manifestKeyOf(key) };
}

/** The restore points of `cluster` in a destination, and what was found that is not one (corrupt or foreign). */
export async function listRestorePoints(d: OpenDestination, cluster: string): Promise<{ points: RestorePoint[]; problems: string[] }> {
  const folder = `${clusterFolder(d.prefix, cluster)}full/`;
  const keys = await d.store.list(folder);
  const points: RestorePoint[] = [];
  const problems: string[] = [];
  const have = new Set(keys);
  for (const k of keys.filter((x) => x.endsWith('.json'))) {
    const p = parseManifest((await d.store.get(k)).toString('utf8'), k);
    if ('problem' in p) problems.push(p.problem);
    else if (!have.has(p.key)) problems.push(`${k} names ${p.key}, which is not there`);
    else points.push(p);
  }
  points.sort((a, b) => a.revision - b.revision || a.time.localeCompare(b.time));
  return { points, problems };
}

/** The clusters whose backups are under a destination's prefix. */
export async function clustersOf(d: OpenDestination): Promise<string[]> {
  return clustersIn(await d.store.list(d.prefix ? `${d.prefix}/` : ''), d.prefix);
}

/**
 * Applies spec.backup.keep and maxAge to a destination's full snapshots, then removes the delta segments only the
 * removed ones needed; returns the points removed. `cluster` is whose segments (the points' cluster).
 */
export async function applyRetention(d: OpenDestination, points: RestorePoint[], spec: Pick<SvcClusterSpec, 'backup'>, now: Date): Promise<RestorePoint[]> {
  const maxAge = spec.backup?.maxAge ? durationMs(spec.backup.maxAge) : undefined;
  const { kept, removed } = retainFull(points, spec.backup?.keep ?? DEFAULT_KEEP, maxAge, now);
  // the manifest first: a snapshot left without one (a delete cut short) is not offered as a restore point
  for (const p of removed) {
    await d.store.delete(p.manifestKey);
    await d.store.delete(p.key);
  }
  if (removed.length > 0 && kept.length > 0) {
    for (const s of segmentsToRemove(kept, await listSegments(d, kept[0].cluster))) await d.store.delete(s.key);
  }
  return removed;
}

/** The delta segments of `cluster` in a destination, by their keys (not read). */
export async function listSegments(d: OpenDestination, cluster: string): Promise<SegmentRef[]> {
  const keys = await d.store.list(`${clusterFolder(d.prefix, cluster)}delta/`);
  return keys.map(parseDeltaKey).filter((s): s is SegmentRef => s !== undefined);
}

/** Writes a segment of `cluster`; resolves with its key once the store has it. */
export async function uploadSegment(d: OpenDestination, cluster: string, s: DeltaSegment): Promise<string> {
  const key = deltaKey(d.prefix, cluster, s);
  await d.store.put(key, encodeSegment(s), 'application/jsonl');
  return key;
}

/** Reads and checks a segment; a damaged one is ObjectCorrupt naming it. */
export async function readSegment(d: OpenDestination, ref: SegmentRef): Promise<DeltaSegment> {
  const data = await d.store.get(ref.key);
  try {
    return decodeSegment(data, ref.key);
  } catch (e) {
    throw new DestinationError(d.store.label, 'ObjectCorrupt', `${(e as Error).message}; the revisions it holds cannot be restored (a full snapshot taken later can)`);
  }
}

/**
 * Downloads a restore point's snapshot into `file` and checks it: the reference format (database bytes, then their
 * sha256) of the manifest's size and digest. A mismatch is ObjectCorrupt naming the object.
 */
export async function downloadRestorePoint(d: OpenDestination, point: RestorePoint, file: string): Promise<void> {
  await d.store.getFile(point.key, file);
  const bytes = statSync(file).size;
  if (bytes !== point.size + 32) throw new DestinationError(d.store.label, 'ObjectCorrupt', `${point.key} has ${bytes} bytes, its manifest says ${point.size} + a 32-byte sha256; pick another restore point, or take a new backup`);
  const h = createHash('sha256');
  const fd = openSync(file, 'r');
  const tail = Buffer.alloc(32);
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let off = 0; off < point.size;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, point.size - off), off);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
      off += n;
    }
    readSync(fd, tail, 0, 32, point.size);
  } finally {
    closeSync(fd);
  }
  const digest = h.digest('hex');
  if (digest !== point.sha256 || tail.toString('hex') !== digest) {
    throw new DestinationError(d.store.label, 'ObjectCorrupt', `${point.key} is corrupt: its sha256 ${digest} does not match ${digest !== point.sha256 ? `its manifest's ${point.sha256}` : 'its own trailing digest'}; pick another restore point (revision or time), or take a new backup`);
  }
}
