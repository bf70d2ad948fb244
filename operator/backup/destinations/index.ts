// Backups in destinations: open one from the spec (credentials and CA from a secret source the runtime hands in),
// upload a full snapshot with its manifest, list the restore points, apply retention, download a restore point and
// check it. The layout and the choices are pure (../restore-points.ts); this is the I/O around them.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { BackupDestination, RestoreSpec, S3Destination, SvcClusterSpec } from '../../api/types.js';
import { durationMs } from '../../api/duration.js';
import {
  chainFrom, clusterFolder, clustersIn, deltaKey, describeCoverage, describeRange, fullManifest, fullSnapshotKey, manifestKeyOf, parseDeltaKey, parseManifest,
  pickRestorePoint, planRestore, retainFull, seenThrough, segmentsToRemove, type FullManifest, type RestorePoint, type SegmentRef,
} from '../restore-points.js';
import { decodeSegment, DeltaFormatError, encodeSegment, type DeltaSegment } from '../delta.js';
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

/** The username and password in Secret `secret` (a cluster with authentication on), or undefined when either is not there. */
export function userCredentials(secrets: SecretReader, secret: string): { username: string; password: string } | undefined {
  const username = secrets(secret, 'username');
  const password = secrets(secret, 'password');
  return username && password ? { username, password } : undefined;
}

/** How a runtime opens destinations. */
export interface DestinationAccess {
  secrets: SecretReader;
  /** Where the secret of that name is looked for, as messages name it ("the folder ~/.config/svc-operator/secrets/creds", "the Job's environment"). */
  secretsWhere?: (secret: string) => string;
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

/** The S3 destinations of a spec, by name (pvc destinations are the Kubernetes runtime's claims). */
export function s3Destinations(spec: SvcClusterSpec): NamedS3[] {
  return (spec.backup?.destinations ?? []).filter((d): d is BackupDestination & { s3: S3Destination } => d.s3 !== undefined).map((d) => ({ name: d.name, s3: d.s3 }));
}

/** Opens an S3 destination; a credentials secret that is not there is a DestinationError naming it. */
export function openS3(name: string, s3: S3Destination, access: DestinationAccess, field?: string): OpenDestination {
  const label = `"${name}" (s3://${s3.bucket}${s3.prefix ? `/${s3.prefix}` : ''})`;
  let credentials = access.defaultCredentials;
  if (s3.credentialsSecret) {
    const id = access.secrets(s3.credentialsSecret, 'accessKeyId');
    const secret = access.secrets(s3.credentialsSecret, 'secretAccessKey');
    if (!id || !secret) throw new DestinationError(label, 'NoCredentials', `credentialsSecret ${s3.credentialsSecret} has no accessKeyId and secretAccessKey${access.secretsWhere ? ` in ${access.secretsWhere(s3.credentialsSecret)}` : ''}; create it with both keys`);
    const token = access.secrets(s3.credentialsSecret, 'sessionToken');
    credentials = { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) };
  }
  if (!credentials) throw new DestinationError(label, 'NoCredentials', 'no credentials: name a credentialsSecret (keys accessKeyId, secretAccessKey); locally, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment of svc-operator serve too');
  let ca = s3.caBundle;
  if (s3.caSecret) {
    ca = access.secrets(s3.caSecret, 'ca.crt');
    if (!ca) throw new DestinationError(label, 'NoCredentials', `caSecret ${s3.caSecret} has no ca.crt${access.secretsWhere ? ` in ${access.secretsWhere(s3.caSecret)}` : ''}`);
  }
  return { name, prefix: s3.prefix, store: new S3Store({ name, spec: s3, credentials, ca, timeoutMs: access.timeoutMs, ...(field ? { field } : {}) }) };
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

/** What retention keeps of full snapshots: spec.backup.keep and maxAge. */
export interface Retention {
  keep: number;
  /** A duration ("168h"). */
  maxAge?: string;
}

/** The retention of a spec. */
export function retentionOf(spec: Pick<SvcClusterSpec, 'backup'>): Retention {
  return { keep: spec.backup?.keep ?? DEFAULT_KEEP, ...(spec.backup?.maxAge ? { maxAge: spec.backup.maxAge } : {}) };
}

/**
 * Applies the retention to a destination's full snapshots, then removes the delta segments only the removed ones
 * needed; returns the points removed.
 */
export async function applyRetention(d: OpenDestination, points: RestorePoint[], retention: Retention, now: Date): Promise<RestorePoint[]> {
  const maxAge = retention.maxAge ? durationMs(retention.maxAge) : undefined;
  const { kept, removed } = retainFull(points, retention.keep, maxAge, now);
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

/**
 * Reads and checks a segment (its checksum, its revisions without a hole and as its name says) and notes on `ref`
 * when the agent saw them (time targets); a damaged one is ObjectCorrupt naming it.
 */
export async function readSegment(d: OpenDestination, ref: SegmentRef): Promise<DeltaSegment> {
  const got = await checkedSegment(d, ref);
  if ('segment' in got) return got.segment;
  throw new DestinationError(d.store.label, 'ObjectCorrupt', `${ref.key}: ${got.problem}; the revisions it holds cannot be restored (a full snapshot taken later can)`);
}

/** A segment read and checked, or why it is broken (without its key). */
async function checkedSegment(d: OpenDestination, ref: SegmentRef): Promise<{ segment: DeltaSegment } | { problem: string }> {
  const data = await d.store.get(ref.key);
  let s: DeltaSegment;
  try {
    s = decodeSegment(data, ref.key);
  } catch (e) {
    if (!(e instanceof DeltaFormatError)) throw e;
    return { problem: e.problem };
  }
  if (s.fromRevision !== ref.fromRevision || s.toRevision !== ref.toRevision) return { problem: `its name says revisions ${ref.fromRevision}..${ref.toRevision}, it holds ${s.fromRevision}..${s.toRevision}` };
  ref.lastTime = s.lastTime;
  if (s.changes.every((c) => c.seen !== undefined)) ref.seen = s.changes.map((c) => Date.parse(c.seen!));
  return { segment: s };
}

/** A segment that failed its check: its key, its revisions and why. */
export interface BrokenSegment {
  key: string;
  fromRevision: number;
  toRevision: number;
  problem: string;
}

/**
 * Reads and checks every segment (a few at a time): the intact ones (their times noted), and the broken ones in
 * revision order. Only reading them tells: a name says nothing of the bytes behind it.
 */
export async function checkSegments(d: OpenDestination, segments: readonly SegmentRef[]): Promise<{ intact: SegmentRef[]; broken: BrokenSegment[] }> {
  const sorted = [...segments].sort((a, b) => a.fromRevision - b.fromRevision || a.toRevision - b.toRevision);
  const bad = new Map<SegmentRef, string>();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < sorted.length; i = next++) {
      const got = await checkedSegment(d, sorted[i]);
      if ('problem' in got) bad.set(sorted[i], got.problem);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, sorted.length) }, worker));
  return {
    intact: sorted.filter((s) => !bad.has(s)),
    broken: sorted.filter((s) => bad.has(s)).map((s) => ({ key: s.key, fromRevision: s.fromRevision, toRevision: s.toRevision, problem: bad.get(s)! })),
  };
}

/** Downloads and checks a restore point's snapshot into folder `dir` (which must exist), named as its key ends; returns the file. */
export async function downloadInto(d: OpenDestination, point: RestorePoint, dir: string): Promise<string> {
  const file = `${dir.replace(/\/+$/, '')}/${point.key.slice(point.key.lastIndexOf('/') + 1)}`;
  await downloadRestorePoint(d, point, file);
  return file;
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

/** An S3 destination by name, as the spec gives it (what a backup Job is handed). */
export interface NamedS3 {
  name: string;
  s3: S3Destination;
  /** Where `s3` is written in the spec, when not in spec.backup.destinations (spec.restore.source.s3). */
  field?: string;
}

/** Whether a value (parsed JSON a command was handed) is a NamedS3: a name and an s3 with a bucket. */
export function isNamedS3(v: unknown): v is NamedS3 {
  const d = v as NamedS3;
  return typeof d === 'object' && d !== null && typeof d.name === 'string' && typeof d.s3 === 'object' && d.s3 !== null && typeof d.s3.bucket === 'string';
}

/**
 * Uploads a snapshot file with its manifest to every destination, each listed first (an unreachable store, refused
 * credentials or a missing bucket show as such, not as an upload cut short), then applies retention there. The
 * first destination that fails throws its DestinationError. Both runtimes call it: the local runtime after the engine
 * streamed the snapshot, on Kubernetes the backup Job (svc-operator backup --s3) after it wrote the claim's file.
 */
export async function shipToDestinations(dests: readonly NamedS3[], access: DestinationAccess, file: string, m: FullSnapshotInput, retention: Retention, now: Date): Promise<RestorePoint[]> {
  const added: RestorePoint[] = [];
  for (const d of dests) {
    const dest = openS3(d.name, d.s3, access);
    try {
      added.push(await shipFull(dest, file, m, retention, now));
    } finally {
      dest.store.close();
    }
  }
  return added;
}

/**
 * Whether each destination takes `cluster`'s backups now: its full snapshots listed (the endpoint answers, the
 * credentials are accepted, the bucket is there). The DestinationError of each that does not, in spec order.
 */
export async function checkDestinations(dests: readonly NamedS3[], access: DestinationAccess, cluster: string): Promise<DestinationError[]> {
  const problems = await Promise.all(dests.map(async (d) => {
    let dest: OpenDestination | undefined;
    try {
      dest = openS3(d.name, d.s3, access, d.field);
      await dest.store.list(`${clusterFolder(dest.prefix, cluster)}full/`);
      return undefined;
    } catch (e) {
      if (e instanceof DestinationError) return e;
      throw e;
    } finally {
      dest?.store.close();
    }
  }));
  return problems.filter((p): p is DestinationError => p !== undefined);
}

/**
 * One destination's part of shipToDestinations (the backup agent's full snapshots too): lists its restore points,
 * uploads the snapshot with its manifest, then applies retention to what is there; returns the point added.
 */
export async function shipFull(dest: OpenDestination, file: string, m: FullSnapshotInput, retention: Retention, now: Date): Promise<RestorePoint> {
  const { points } = await listRestorePoints(dest, m.cluster);
  const point = await uploadFull(dest, file, m);
  await applyRetention(dest, [...points.filter((p) => p.key !== point.key), point], retention, now);
  return point;
}

/** spec.restore.source cannot be used as it is written (a destination it names that is not there, no or several clusters). */
export class RestoreSourceError extends Error {
  /** NotCovered: the revision or time asked for is outside the backups (the message gives their range). */
  constructor(message: string, readonly code: 'NotCovered' | 'SourceInvalid' = 'SourceInvalid') {
    super(message);
    this.name = 'RestoreSourceError';
  }
}

/** The destination spec.restore.source names: one of `spec`'s S3 destinations by name, or its own bucket. */
export function restoreDestination(restore: RestoreSpec, spec: SvcClusterSpec): NamedS3 {
  const src = restore.source;
  if (!src) throw new RestoreSourceError('spec.restore names no source');
  if (src.destination !== undefined) {
    const named = s3Destinations(spec).find((d) => d.name === src.destination);
    if (!named) throw new RestoreSourceError(`spec.restore.source.destination "${src.destination}" is not an s3 destination of spec.backup.destinations`);
    return named;
  }
  return { name: 'restore source', s3: src.s3!, field: 'spec.restore.source.s3' };
}

/**
 * Opens spec.restore.source and finds whose backups it restores: source.cluster, else the only cluster under the
 * prefix (none or several: a RestoreSourceError saying what is there). The caller closes the store.
 */
async function openRestoreSource(restore: RestoreSpec, spec: SvcClusterSpec, access: DestinationAccess): Promise<{ dest: OpenDestination; cluster: string; source: NamedS3 }> {
  const source = restoreDestination(restore, spec);
  const dest = openS3(source.name, source.s3, access, source.field);
  try {
    if (restore.source?.cluster) return { dest, cluster: restore.source.cluster, source };
    const clusters = await clustersOf(dest);
    if (clusters.length === 1) return { dest, cluster: clusters[0], source };
    throw new RestoreSourceError(clusters.length === 0
      ? `${dest.store.label} holds no backups under its prefix; check bucket and prefix`
      : `${dest.store.label} holds the backups of ${clusters.join(', ')}: name one in spec.restore.source.cluster`);
  } catch (e) {
    dest.store.close();
    throw e;
  }
}

/** The restore points of spec.restore.source, what is in the way (corrupt or foreign objects), where and whose they are. */
export async function restoreSourcePoints(restore: RestoreSpec, spec: SvcClusterSpec, access: DestinationAccess): Promise<SourcePoints> {
  const { dest, cluster } = await openRestoreSource(restore, spec, access);
  try {
    const listed = await listRestorePoints(dest, cluster);
    // every segment read and checked: what is restorable ends before the first broken one (and the times are known)
    const { intact, broken } = await checkSegments(dest, await listSegments(dest, cluster));
    return { ...listed, segments: intact, broken, where: dest.store.label, cluster };
  } finally {
    dest.store.close();
  }
}

/** A restore source's points and delta segments, what is in the way (corrupt or foreign objects), and where. */
export interface SourcePoints {
  points: RestorePoint[];
  /** The intact delta segments (each read and checked). */
  segments: SegmentRef[];
  /** The segments that failed their check, in revision order. */
  broken: BrokenSegment[];
  problems: string[];
  where: string;
  cluster: string;
}

/** What spec.restore picks: a full snapshot, and with continuous backup the delta segments up to `revision`. */
export interface PickedRestore {
  point: RestorePoint;
  /** The revision restored: the point's, or past it through `segments`. */
  revision: number;
  segments: SegmentRef[];
  source: NamedS3;
  /** The destination and its covered range, as messages name them. */
  where: string;
}

/**
 * Picks the restore of spec.restore (restore-points.ts planRestore: the newest full snapshot at or before its revision
 * or time, and the delta segments up to it, or the newest point); a point the backups do not cover is a
 * RestoreSourceError with their range (`name`: the cluster to be created).
 */
export async function pickRestore(restore: RestoreSpec, spec: SvcClusterSpec, access: DestinationAccess, name: string): Promise<PickedRestore> {
  const { dest, cluster, source } = await openRestoreSource(restore, spec, access);
  try {
    const { points, problems } = await listRestorePoints(dest, cluster);
    const segments = await listSegments(dest, cluster);
    const target = { revision: restore.revision, time: restore.time };
    const where = `${dest.store.label} (cluster ${cluster})`;
    // a time is matched against when the agent saw each revision (in the segment, not its name); planRestore looks
    // only at the chain after the point the time picks, up to the first segment with a revision seen later: only those are read
    if (restore.time !== undefined) {
      const picked = pickRestorePoint(points, target, where);
      const t = Date.parse(restore.time);
      if ('point' in picked) {
        for (const ref of chainFrom(picked.point.revision, segments).used) {
          await readSegment(dest, ref);
          if (seenThrough(ref, t) < ref.toRevision) break;
        }
      }
    }
    const plan = planRestore(points, segments, target, where);
    if ('refused' in plan) throw new RestoreSourceError(`cannot create ${name}: ${plan.refused}${problems.length > 0 ? `; also found: ${problems.join('; ')}` : ''}`, 'NotCovered');
    return { ...plan, source, where: `${dest.store.label}, ${describeRange(points)}${segments.length > 0 ? `, ${describeCoverage(points, segments)}` : ''}` };
  } finally {
    dest.store.close();
  }
}

/** Where a backup or restore Job finds the Secrets a destination names: mounted Secrets (a CA bundle's ca.crt). */
export const JOB_SECRETS_MOUNT = '/etc/svc/secrets';

/** The environment variable a Job carries key `key` of Secret `secret` in (credentials: a secretKeyRef). */
export function secretEnvName(secret: string, key: string): string {
  return `SVC_SECRET_${secret.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_${key.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`;
}

/** The Secrets (and their keys) a destination needs: credentials as variables, a CA bundle as a mounted file. */
export function destinationSecrets(s3: S3Destination): { env: Array<{ secret: string; key: string; optional: boolean }>; mounts: string[] } {
  return {
    env: s3.credentialsSecret ? [
      { secret: s3.credentialsSecret, key: 'accessKeyId', optional: false },
      { secret: s3.credentialsSecret, key: 'secretAccessKey', optional: false },
      { secret: s3.credentialsSecret, key: 'sessionToken', optional: true },
    ] : [],
    mounts: s3.caSecret ? [s3.caSecret] : [],
  };
}

/** How a Job opens destinations: the variables its Secrets are handed in as, then the Secrets mounted under JOB_SECRETS_MOUNT. */
export function jobDestinationAccess(env: NodeJS.ProcessEnv, readFile: (path: string) => string | undefined): DestinationAccess {
  return {
    secrets: (secret, key) => env[secretEnvName(secret, key)] || readFile(`${JOB_SECRETS_MOUNT}/${secret}/${key}`),
    secretsWhere: () => 'the Job\'s environment and mounted Secrets (a Secret of the cluster\'s namespace)',
  };
}

/** Reads the manifest at `manifestKey`, then downloads and checks its snapshot into `dir`; returns the file and the point. */
export async function fetchByManifest(d: OpenDestination, manifestKey: string, dir: string): Promise<{ file: string; point: RestorePoint }> {
  const p = parseManifest((await d.store.get(manifestKey)).toString('utf8'), manifestKey);
  if ('problem' in p) throw new DestinationError(d.store.label, 'ObjectCorrupt', `${p.problem}; pick another restore point, or take a new backup`);
  return { file: await downloadInto(d, p, dir), point: p };
}
