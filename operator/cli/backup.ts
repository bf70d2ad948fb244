// The commands the operator's Jobs run in a cluster's namespace (the operator pod cannot mount a per-cluster PVC):
//   svc-operator backup --endpoint URL --member NAME --dir DIR --file NAME.db [--keep N] [--record FILE]
//       [--cacert FILE --cert FILE --key FILE]   (a TLS cluster: its CA and a client certificate, as etcdctl takes them)
//       streams a snapshot of the member into DIR/NAME.db (through a .part file, sha256 checked), removes the
//       oldest .db files of DIR beyond the newest N, and writes a BackupRecord (JSON) to FILE
//   svc-operator restore --snapshot FILE --members NAME=DATADIR,... --initial-cluster NAME=URL,...
//       --initial-cluster-token TOKEN [--record FILE]
//       builds each member's data dir from the snapshot (svc's own restore), one temp dir renamed into place,
//       and writes a RestoreRecord to FILE
//   svc-operator verify --snapshot FILE --revision N --scratch DIR [--record FILE]
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
import type { BackupRecord, RestoreRecord, VerifyRecord } from '../api/job-records.js';
import { runDrill } from '../runtime/local/drill.js';
import { DEFAULT_SVC_ENTRY } from '../runtime/local/index.js';
import { parseArgs, UsageError } from './args.js';

/** Termination messages are cut at 4096 bytes by the kubelet. */
export const MAX_RECORD_BYTES = 4096;

/** Marker a restored data dir carries, so a re-run Job knows the dir is its own work. */
const RESTORED_MARKER = 'restored-from.json';

const USAGE = `usage:
  svc-operator backup --endpoint URL --member NAME --dir DIR --file NAME.db [--keep N] [--record FILE]
                      [--cacert FILE --cert FILE --key FILE]
  svc-operator restore --snapshot FILE --members NAME=DATADIR,... --initial-cluster NAME=URL,... --initial-cluster-token TOKEN [--record FILE]
  svc-operator verify --snapshot FILE --revision N --scratch DIR [--record FILE]
`;

/** True when argv names a Job command (main.ts hands those to jobMain). */
export function isJobCommand(argv: readonly string[]): boolean {
  return argv[0] === 'backup' || argv[0] === 'restore' || argv[0] === 'verify';
}

function writeRecord(file: string | undefined, record: object): void {
  if (!file) return;
  let text = JSON.stringify(record);
  if (Buffer.byteLength(text) > MAX_RECORD_BYTES) text = JSON.stringify({ error: String((record as { error?: string }).error ?? text).slice(0, MAX_RECORD_BYTES - 200) });
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

/** `backup`: snapshot of one member into dir/file, then pruning. */
export async function backup(flags: Map<string, string>): Promise<BackupRecord> {
  const endpoint = need(flags, 'endpoint');
  const member = need(flags, 'member');
  const dir = need(flags, 'dir');
  const file = need(flags, 'file');
  if (file.includes('/') || !file.endsWith('.db')) throw new UsageError('--file must be a plain file name ending in .db');
  const keepText = flags.get('keep') ?? '3';
  if (!/^[1-9]\d*$/.test(keepText)) throw new UsageError('--keep must be a positive integer');
  const tlsFiles = ['cacert', 'cert', 'key'].map((f) => flags.get(f));
  if (tlsFiles.some((f) => f !== undefined) && tlsFiles.some((f) => f === undefined)) throw new UsageError('--cacert, --cert and --key go together');
  const readTls = (f: string) => {
    try {
      return readFileSync(f);
    } catch (e) {
      throw new UsageError(`cannot read ${f}: ${(e as Error).message}`);
    }
  };
  const tls = tlsFiles[0] === undefined ? undefined : { ca: readTls(tlsFiles[0]), cert: readTls(tlsFiles[1]!), key: readTls(tlsFiles[2]!) };
  mkdirSync(dir, { recursive: true });
  const client = new MemberClient({ timeoutMs: 10_000, attempts: 3, tls });
  try {
    const rec = await client.snapshot(endpoint, member, join(dir, file));
    const pruned = pruneSnapshotDir(dir, Number(keepText));
    return { file, member, revision: rec.revision, size: rec.size, sha256: rec.sha256, time: rec.time, ...(rec.kvHash !== undefined ? { kvHash: rec.kvHash, compactRevision: rec.compactRevision } : {}), pruned };
  } finally {
    client.close();
  }
}

/** `restore`: every member's data dir from one snapshot. */
export async function restore(flags: Map<string, string>): Promise<RestoreRecord> {
  const snapshot = need(flags, 'snapshot');
  const members = pairs(need(flags, 'members'), 'members');
  const initial = pairs(need(flags, 'initial-cluster'), 'initial-cluster');
  const token = need(flags, 'initial-cluster-token');
  const byName = new Map<string, string[]>();
  for (const [n, url] of initial) byName.set(n, [...(byName.get(n) ?? []), url]);
  const initialCluster = [...byName].map(([name, peerURLs]) => ({ name, peerURLs }));
  // checked once here (a missing or corrupt file fails before any data dir is touched)
  const sha256 = createHash('sha256').update(verifySnapshotFile(snapshot)).digest('hex');
  const out: RestoreRecord = { snapshot: basename(snapshot), sha256, clusterId: '', members: [] };
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
  const snapshot = need(flags, 'snapshot');
  const revisionText = need(flags, 'revision');
  if (!/^[1-9]\d*$/.test(revisionText)) throw new UsageError('--revision must be a positive integer');
  const m = await runDrill({ snapshotFile: snapshot, revision: Number(revisionText), scratchDir: need(flags, 'scratch'), svcEntry: DEFAULT_SVC_ENTRY });
  return { snapshot: basename(snapshot), revision: Number(revisionText), ...(m.hash !== undefined ? { hash: m.hash, compactRevision: m.compactRevision } : {}), ...(m.error !== undefined ? { failure: m.error } : {}) };
}

/** Runs `backup`, `restore` or `verify`; resolves with the exit code. */
export async function jobMain(argv: string[]): Promise<number> {
  let record: string | undefined;
  try {
    const { words, flags } = parseArgs(argv, { string: ['endpoint', 'member', 'dir', 'file', 'keep', 'record', 'cacert', 'cert', 'key', 'snapshot', 'members', 'initial-cluster', 'initial-cluster-token', 'revision', 'scratch'] });
    record = flags.get('record');
    if (words.length !== 1) throw new UsageError(`unknown command: ${words.join(' ')}`);
    const result = words[0] === 'backup' ? await backup(flags) : words[0] === 'verify' ? await verify(flags) : await restore(flags);
    writeRecord(record, result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    try {
      writeRecord(record, { error: message });
    } catch {
      // the message below still reaches the log
    }
    process.stderr.write(`svc-operator: ${message}\n${e instanceof UsageError ? USAGE : ''}`);
    return e instanceof UsageError ? 2 : 1;
  }
}
