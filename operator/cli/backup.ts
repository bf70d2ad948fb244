// The commands the operator's Jobs run in a cluster's namespace (the operator pod cannot mount a per-cluster PVC):
//   svc-operator backup --endpoint URL --member NAME --dir DIR --file NAME.db [--keep N] [--record FILE]
//       [--cacert FILE --cert FILE --key FILE]   (a TLS cluster: its CA and a client certificate, as etcdctl takes them)
//       streams a snapshot of the member into DIR/NAME.db (through a .part file, sha256 checked), removes the
//       oldest .db files of DIR beyond the newest N, and writes a BackupRecord (JSON) to FILE
//       [--s3 JSON --cluster NAME --release X.Y.Z --kind KIND [--max-age DURATION]]  then uploads it with its manifest
//       to each object-store destination of JSON ([{name, s3}], its Secrets in the environment and under
//       /etc/svc/secrets) and applies retention there (--keep, --max-age): the local runtime's code
//   svc-operator restore --snapshot FILE --members NAME=DATADIR,... --initial-cluster NAME=URL,...
//       --initial-cluster-token TOKEN [--record FILE]
//       builds each member's data dir from the snapshot (svc's own restore), one temp dir renamed into place,
//       and writes a RestoreRecord to FILE
//       [--s3 JSON --object KEY --download DIR]  instead of --snapshot: downloads the restore point whose manifest is
//       KEY from the destination JSON ({name, s3}) into DIR and checks its sha256 first
//       [--revision N --segments KEY,...]  then replays the delta segments KEY,... up to revision N into it (a scratch
//       member under DIR, replayIntoSnapshot of runtime/local/drill.ts: the local runtime's code)
//   svc-operator verify (--snapshot FILE | --s3 JSON --object MANIFEST-KEY --download DIR) --revision N --scratch DIR [--record FILE]
//       a restore drill: restores FILE into DIR (a scratch member with no peers, removed after) and writes a
//       VerifyRecord with its KV hash at revision N (the operator compares it with the one recorded at backup time)
// FILE is meant to be the container's terminationMessagePath: the operator reads the record from the pod status.
// On failure the record is {"error": "..."} and the exit code 1.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { restoreSnapshot, verifySnapshotFile } from '../../server/cluster/restore.js';
import { nopLogger } from '../../server/log/logger.js';
import { createHash } from 'node:crypto';
import { MemberClient } from '../members/index.js';
import { pruneSnapshotDir } from '../runtime/snapshot-files.js';
import type { BackupRecord, JobError, RestoreRecord, VerifyRecord } from '../api/job-records.js';
import type { BackupKind } from '../api/types.js';
import { DestinationError, fetchByManifest, isNamedS3, jobDestinationAccess, openS3, readSegment, shipToDestinations, type NamedS3, type OpenDestination } from '../backup/destinations/index.js';
import { changesBetween } from '../backup/delta.js';
import { parseDeltaKey } from '../backup/restore-points.js';
import { replayIntoSnapshot, runDrill } from '../runtime/local/drill.js';
import { DEFAULT_SVC_ENTRY } from '../runtime/local/index.js';
import { parseArgs, readTlsFiles, UsageError } from './args.js';

/** Termination messages are cut at 4096 bytes by the kubelet. */
export const MAX_RECORD_BYTES = 4096;

/** Marker a restored data dir carries, so a re-run Job knows the dir is its own work. */
const RESTORED_MARKER = 'restored-from.json';

const USAGE = `usage:
  svc-operator backup --endpoint URL --member NAME --dir DIR --file NAME.db [--keep N] [--record FILE]
                      [--cacert FILE --cert FILE --key FILE]
                      [--s3 JSON --cluster NAME --release X.Y.Z --kind KIND [--max-age DURATION]]
  svc-operator restore (--snapshot FILE | --s3 JSON --object KEY --download DIR [--revision N --segments KEY,...]) --members NAME=DATADIR,... --initial-cluster NAME=URL,... --initial-cluster-token TOKEN [--record FILE]
  svc-operator verify (--snapshot FILE | --s3 JSON --object MANIFEST-KEY --download DIR) --revision N --scratch DIR [--record FILE]
`;

/** True when argv names a Job command (main.ts hands those to jobMain). */
export function isJobCommand(argv: readonly string[]): boolean {
  return argv[0] === 'backup' || argv[0] === 'restore' || argv[0] === 'verify';
}

function writeRecord(file: string | undefined, record: object): void {
  if (!file) return;
  let text = JSON.stringify(record);
  if (Buffer.byteLength(text) > MAX_RECORD_BYTES) {
    const { error, destination, cause } = record as Partial<JobError>;
    text = JSON.stringify({ error: String(error ?? text).slice(0, MAX_RECORD_BYTES - 600), ...(cause ? { destination: destination?.slice(0, 300), cause } : {}) });
  }
  writeFileSync(file, text);
}

function need(flags: Map<string, string>, name: string): string {
  const v = flags.get(name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** name=value,name=value -> pairs (a name may repeat in --initial-cluster). */
function pairs(text: string, flag: string): Array<[string, string]> {
  return text.split(',').map((s) => s.trim()).filter(Boolean).map((part) => {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${flag}: "${part}" is not name=value`);
    return [part.slice(0, eq), part.slice(eq + 1)];
  });
}

/** A file's text, or undefined when it is not there (a Secret that is not mounted). */
function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A flag holding JSON of the shape `ok` accepts. */
function jsonFlag<T>(flags: Map<string, string>, name: string, ok: (v: unknown) => boolean): T {
  let v: unknown;
  try {
    v = JSON.parse(need(flags, name));
  } catch (e) {
    throw new UsageError(`--${name} is not JSON: ${(e as Error).message}`);
  }
  if (!ok(v)) throw new UsageError(`--${name} is not what it should be (object-store destinations: {"name", "s3": {"bucket", ...}})`);
  return v as T;
}

/**
 * --s3 JSON (one destination) and --download DIR of restore and verify: checks them (and the flags of `checkFirst`
 * between the two), makes DIR, opens the destination for `use` and closes it after.
 */
async function withS3Download<T>(flags: Map<string, string>, use: (dest: OpenDestination, download: string) => Promise<T>, checkFirst: readonly string[] = []): Promise<T> {
  const source = jsonFlag<NamedS3>(flags, 's3', isNamedS3);
  for (const f of checkFirst) need(flags, f);
  const download = need(flags, 'download');
  mkdirSync(download, { recursive: true });
  const dest = openS3(source.name, source.s3, jobDestinationAccess(process.env, readIfThere), source.field);
  try {
    return await use(dest, download);
  } finally {
    dest.store.close();
  }
}

/** `backup`: snapshot of one member into dir/file, then pruning, then the upload to the object-store destinations. */
export async function backup(flags: Map<string, string>): Promise<BackupRecord> {
  const endpoint = need(flags, 'endpoint');
  const member = need(flags, 'member');
  const dir = need(flags, 'dir');
  const file = need(flags, 'file');
  if (file.includes('/') || !file.endsWith('.db')) throw new UsageError('--file must be a plain file name ending in .db');
  const keepText = flags.get('keep') ?? '3';
  if (!/^[1-9]\d*$/.test(keepText)) throw new UsageError('--keep must be a positive integer');
  const tls = readTlsFiles([flags.get('cacert'), flags.get('cert'), flags.get('key')]);
  // checked before the snapshot: a Job given a wrong list takes none
  const dests = flags.has('s3') ? jsonFlag<NamedS3[]>(flags, 's3', (v) => Array.isArray(v) && v.every(isNamedS3)) : [];
  const kind = dests.length > 0 ? need(flags, 'kind') as BackupKind : undefined;
  if (kind !== undefined && !['scheduled', 'pre-upgrade', 'on-demand'].includes(kind)) throw new UsageError('--kind must be scheduled, pre-upgrade or on-demand');
  if (dests.length > 0) {
    need(flags, 'cluster');
    need(flags, 'release');
  }
  mkdirSync(dir, { recursive: true });
  const client = new MemberClient({ timeoutMs: 10_000, attempts: 3, tls });
  try {
    const rec = await client.snapshot(endpoint, member, join(dir, file));
    const pruned = pruneSnapshotDir(dir, Number(keepText));
    const kv = rec.kvHash !== undefined ? { kvHash: rec.kvHash, compactRevision: rec.compactRevision } : {};
    const out: BackupRecord = { file, member, revision: rec.revision, size: rec.size, sha256: rec.sha256, time: rec.time, ...kv, pruned };
    if (dests.length > 0) {
      const points = await shipToDestinations(dests, jobDestinationAccess(process.env, readIfThere), join(dir, file), {
        cluster: need(flags, 'cluster'), member, revision: rec.revision, time: rec.time, sha256: rec.sha256, size: rec.size, release: need(flags, 'release'), backupKind: kind!,
        ...(rec.kvHash !== undefined && rec.compactRevision !== undefined ? { hashKV: rec.kvHash, compactRevision: rec.compactRevision } : {}),
      }, { keep: Number(keepText), ...(flags.get('max-age') ? { maxAge: flags.get('max-age') } : {}) }, new Date());
      out.uploaded = points.map((p) => p.key);
    }
    return out;
  } finally {
    client.close();
  }
}

/** `restore`: every member's data dir from one snapshot. */
export async function restore(flags: Map<string, string>): Promise<RestoreRecord> {
  const members = pairs(need(flags, 'members'), 'members');
  const initial = pairs(need(flags, 'initial-cluster'), 'initial-cluster');
  const token = need(flags, 'initial-cluster-token');
  if (flags.has('snapshot') === flags.has('s3')) throw new UsageError('give --snapshot FILE, or --s3 JSON with --object KEY and --download DIR');
  let snapshot: string;
  let object: string | undefined;
  let revision: number | undefined;
  if (flags.has('s3')) {
    // downloaded and checked (its manifest's size and sha256) before any data dir is touched
    snapshot = await withS3Download(flags, async (dest, download) => {
      const got = await fetchByManifest(dest, need(flags, 'object'), download);
      let file = got.file;
      object = got.point.key;
      if (flags.has('revision')) {
        // continuous backup: the picked delta segments replayed into a scratch member on top of the full snapshot
        const target = Number(need(flags, 'revision'));
        if (!Number.isInteger(target) || target < got.point.revision) throw new UsageError(`--revision must be an integer at or after the full snapshot's revision ${got.point.revision}`);
        if (target > got.point.revision) {
          const refs = need(flags, 'segments').split(',').map((k) => parseDeltaKey(k));
          if (refs.some((r) => r === undefined)) throw new UsageError('--segments must be delta segment keys (<prefix>/<cluster>/delta/delta-<from>-<to>.jsonl), comma-separated');
          const segments = await Promise.all(refs.map((r) => readSegment(dest, r!)));
          file = await replayIntoSnapshot({
            snapshot: file, base: got.point.revision, changes: changesBetween(segments, got.point.revision, target),
            scratchDir: join(download, 'replay'), svcEntry: DEFAULT_SVC_ENTRY, out: join(download, `replayed-${target}.db`),
          });
          revision = target;
        }
      }
      return file;
    });
  } else snapshot = need(flags, 'snapshot');
  const byName = new Map<string, string[]>();
  for (const [n, url] of initial) byName.set(n, [...(byName.get(n) ?? []), url]);
  const initialCluster = [...byName].map(([name, peerURLs]) => ({ name, peerURLs }));
  // checked once here (a missing or corrupt file fails before any data dir is touched)
  const sha256 = createHash('sha256').update(verifySnapshotFile(snapshot)).digest('hex');
  const out: RestoreRecord = { snapshot: basename(snapshot), sha256, clusterId: '', ...(object ? { object } : {}), ...(revision !== undefined ? { revision } : {}), members: [] };
  for (const [name, dataDir] of members) {
    const peerURLs = byName.get(name);
    if (!peerURLs) throw new UsageError(`--members names ${name}, which --initial-cluster does not`);
    const marker = join(dataDir, RESTORED_MARKER);
    if (existsSync(join(dataDir, 'member'))) {
      const mine = existsSync(marker) && (JSON.parse(readFileSync(marker, 'utf8')) as { sha256?: string; token?: string }).sha256 === sha256;
      if (!mine) throw new Error(`data dir of ${name} (${dataDir}) already holds data that was not restored from this snapshot; refusing to overwrite it`);
      const m = JSON.parse(readFileSync(marker, 'utf8')) as { memberId: string; clusterId: string };
      out.clusterId = m.clusterId;
      out.members.push({ name, memberId: m.memberId, skipped: true });
      continue;
    }
    // restore beside the data dir and rename: a Job killed half-way leaves no half-restored member behind
    const tmp = `${dataDir.replace(/\/+$/, '')}.restoring`;
    rmSync(tmp, { recursive: true, force: true });
    const r = await restoreSnapshot(nopLogger, { snapshotFile: snapshot, dataDir: tmp, name, initialCluster, initialClusterToken: token, advertisePeerURLs: peerURLs });
    writeFileSync(join(tmp, RESTORED_MARKER), JSON.stringify({ snapshot: basename(snapshot), sha256, memberId: r.memberId, clusterId: r.clusterId }));
    rmSync(dataDir, { recursive: true, force: true }); // an empty dir, or nothing (checked above)
    renameSync(tmp, dataDir);
    out.clusterId = r.clusterId;
    out.members.push({ name, memberId: r.memberId });
  }
  return out;
}

/** `verify`: a restore drill of one snapshot file (runtime/local/drill.ts, the same code the local runtime runs). */
export async function verify(flags: Map<string, string>): Promise<VerifyRecord> {
  const revisionText = need(flags, 'revision');
  if (!/^[1-9]\d*$/.test(revisionText)) throw new UsageError('--revision must be a positive integer');
  const revision = Number(revisionText);
  if (flags.has('snapshot') === flags.has('s3')) throw new UsageError('give --snapshot FILE, or --s3 JSON with --object KEY and --download DIR');
  let snapshot: string;
  if (flags.has('s3')) {
    // a bucket's restore point: downloaded and checked against its manifest first (a corrupt object fails the drill)
    const got = await withS3Download(flags, async (dest, download) => {
      const object = need(flags, 'object');
      try {
        return (await fetchByManifest(dest, object, download)).file;
      } catch (e) {
        if (e instanceof DestinationError) return { snapshot: object, revision, failure: e.message } satisfies VerifyRecord;
        throw e;
      }
    }, ['object']);
    if (typeof got !== 'string') return got;
    snapshot = got;
  } else snapshot = need(flags, 'snapshot');
  const m = await runDrill({ snapshotFile: snapshot, revision, scratchDir: need(flags, 'scratch'), svcEntry: DEFAULT_SVC_ENTRY });
  return { snapshot: basename(snapshot), revision, ...(m.hash !== undefined ? { hash: m.hash, compactRevision: m.compactRevision } : {}), ...(m.error !== undefined ? { failure: m.error } : {}) };
}

/** Runs `backup`, `restore` or `verify`; resolves with the exit code. */
export async function jobMain(argv: string[]): Promise<number> {
  let record: string | undefined;
  try {
    const { words, flags } = parseArgs(argv, { string: ['endpoint', 'member', 'dir', 'file', 'keep', 'record', 'cacert', 'cert', 'key', 'snapshot', 'members', 'initial-cluster', 'initial-cluster-token', 'revision', 'scratch', 's3', 'cluster', 'release', 'kind', 'max-age', 'object', 'download', 'segments'] });
    record = flags.get('record');
    if (words.length !== 1) throw new UsageError(`unknown command: ${words.join(' ')}`);
    const result = words[0] === 'backup' ? await backup(flags) : words[0] === 'verify' ? await verify(flags) : await restore(flags);
    writeRecord(record, result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    try {
      const failed: JobError = e instanceof DestinationError ? { error: message, destination: e.destination, cause: e.reason } : { error: message };
      writeRecord(record, failed);
    } catch {
      // the message below still reaches the log
    }
    // the message last: a Job's failure is read from the end of its log when no record could be written
    process.stderr.write(`${e instanceof UsageError ? USAGE : ''}svc-operator: ${message}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}
