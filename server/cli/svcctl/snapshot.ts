// snapshot save | status | restore.
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { boltStatus } from '../../cluster/bolt-snapshot.js';
import { saveSnapshot } from '../../client/index.js';
import { openBackend, BUCKETS } from '../../storage/backend.js';
import { MvccStore } from '../../mvcc/kvstore.js';
import { nopLogger } from '../../log/logger.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { humanizeBytes, renderTable } from './format.js';
import { flagBool, flagStr } from './flags.js';
import { restoreSnapshot, RestoreError } from '../../cluster/restore.js';
import { memberDb } from './offline.js';

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export async function snapshot(ctx: Ctx): Promise<void> {
  const sub = ctx.p.positional[1];
  switch (sub) {
    case 'save': return save(ctx);
    case 'status': return status(ctx);
    case 'restore': return restore(ctx);
    default:
      throw new CliError(sub === undefined ? 'snapshot command needs a subcommand (save, status, restore)' : `unknown command "${sub}" for "svcctl snapshot"`, Exit.BadArgs);
  }
}

/**
 * snapshot restore <file>: a new member data dir holding the snapshot's v3 data, for a new cluster (the way
 * back after an upgrade). Defaults follow the reference: name "default", data dir "<name>.svc", peer URL
 * http://localhost:2380, initial cluster "<name>=<peer URL>", token "svc-cluster".
 */
async function restore(ctx: Ctx): Promise<void> {
  const args = ctx.args(2);
  if (args.length !== 1) throw new CliError('snapshot restore requires exactly one argument', Exit.BadArgs);
  const name = flagStr(ctx.p, 'name', 'default');
  const peerURLs = flagStr(ctx.p, 'initial-advertise-peer-urls', 'http://localhost:2380').split(',').map((u) => u.trim()).filter(Boolean);
  const clusterText = flagStr(ctx.p, 'initial-cluster', `${name}=${peerURLs.join(',')}`);
  const byName = new Map<string, string[]>();
  for (const part of clusterText.split(',').map((x) => x.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new CliError(`--initial-cluster: "${part}" is not name=url`, Exit.BadArgs);
    byName.set(part.slice(0, eq), [...(byName.get(part.slice(0, eq)) ?? []), part.slice(eq + 1)]);
  }
  const dataDir = flagStr(ctx.p, 'data-dir', `${name}.svc`);
  try {
    const r = await restoreSnapshot(nopLogger, {
      snapshotFile: args[0],
      dataDir,
      walDir: flagStr(ctx.p, 'wal-dir', '') || undefined,
      name,
      initialCluster: [...byName].map(([n, urls]) => ({ name: n, peerURLs: urls })),
      initialClusterToken: flagStr(ctx.p, 'initial-cluster-token', 'svc-cluster'),
      advertisePeerURLs: peerURLs,
      skipHashCheck: flagBool(ctx.p, 'skip-hash-check'),
    });
    ctx.io.out(`Snapshot restored to ${dataDir} (member ${r.memberId}, cluster ${r.clusterId})\n`);
  } catch (e) {
    if (e instanceof RestoreError) throw new CliError(e.message, Exit.Error);
    throw e;
  }
}

async function save(ctx: Ctx): Promise<void> {
  const args = ctx.args(2);
  if (args.length !== 1) throw new CliError('snapshot save expects one argument', Exit.BadArgs);
  if (ctx.endpoints.length !== 1) {
    throw new CliError(`snapshot must be requested to one selected node, not multiple [${ctx.endpoints.join(' ')}]`, Exit.BadArgs);
  }
  const file = args[0];
  const client = await ctx.kv();
  const tty = ctx.io.stdoutIsTTY;
  try {
    await saveSnapshot(client.snapshotRaw(ctx.endpoints[0]), file, tty ? (p) => ctx.io.out(`\rDownloading snapshot: ${humanizeBytes(p.bytes)}`) : undefined);
  } catch (e) {
    if (tty) ctx.io.out('\n');
    throw new CliError((e as Error).message, Exit.Error);
  }
  if (tty) ctx.io.out('\n');
  ctx.io.out(`Snapshot saved at ${file}\n`);
}

/** Meta-page magic numbers: our storage engine's (at byte 24) and the reference's bbolt (at byte 16). */
const LMDB_MAGIC = 0xbeefc0de;
const BOLT_MAGIC = 0xed0cdaed;

interface DbStatus {
  hash: number;
  revision: number;
  totalKey: number;
  totalSize: number;
}

/** Reads a saved snapshot (the reference's bbolt format, or svc's older lmdb snapshots) without changing it. */
export function dbStatus(file: string): DbStatus {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (e) {
    throw new CliError((e as Error).message, Exit.Error);
  }
  // Opening anything but one of our database files could crash the storage engine: check its meta magic.
  const head = Buffer.alloc(28);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 28, 0);
  } finally {
    closeSync(fd);
  }
  if (head.readUInt32LE(16) === BOLT_MAGIC) {
    // the reference's format (what `snapshot save` writes): status as the reference's tool computes it
    try {
      return boltStatus(readFileSync(file));
    } catch (e) {
      throw new CliError((e as Error).message, Exit.Error);
    }
  }
  if (head.readUInt32LE(24) !== LMDB_MAGIC) throw new CliError(`${file} is not a database file (neither the reference's bbolt format nor an svc lmdb file)`, Exit.Error);
  const lock = `${file}-lock`;
  const hadLock = existsSync(lock);
  const backend = openBackend(nopLogger, file, { batchIntervalMs: 0 });
  try {
    const tx = backend.readTx();
    let totalKey = 0;
    for (const b of BUCKETS) tx.forEach(b, () => void totalKey++);
    const store = new MvccStore(backend);
    return { hash: backend.hash(), revision: store.rev(), totalKey, totalSize: size };
  } finally {
    backend.close();
    if (!hadLock) rmSync(lock, { force: true });
  }
}

async function status(ctx: Ctx): Promise<void> {
  const args = ctx.args(2);
  if (args.length !== 1) throw new CliError('snapshot status requires exactly one argument', Exit.BadArgs);
  // a member's data dir: its db, as the reference's `etcdutl snapshot status <data-dir>/member/snap/db` reads a member's
  const ds = dbStatus(isDirectory(args[0]) ? memberDb(args[0]) : args[0]);
  const row = [ds.hash.toString(16), String(ds.revision), String(ds.totalKey), humanizeBytes(ds.totalSize)];
  switch (ctx.format) {
    case 'json': return ctx.io.out(`${JSON.stringify(ds)}\n`);
    case 'table': return ctx.io.out(renderTable(['hash', 'revision', 'total keys', 'total size'], [row]));
    case 'fields': return ctx.io.out(`"Hash" : ${ds.hash}\n"Revision" : ${ds.revision}\n"Keys" : ${ds.totalKey}\n"Size" : ${ds.totalSize}\n`);
    default: return ctx.io.out(`${row.join(', ')}\n`);
  }
}
