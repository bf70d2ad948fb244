// The offline commands on a member's data dir, as the reference's etcdutl has them: `defrag --data-dir` and
// `snapshot status <data-dir>`. svc's db is lmdb, not bbolt, so etcdutl cannot read it (docs/migration.md lists
// which reference tools work on which data dir); these are svc's equivalents.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openBackend } from '../../storage/backend.js';
import { DirLock } from '../../storage/wal-lock.js';
import { WalError } from '../../storage/wal-errors.js';
import { dataDirFormat } from '../../cluster/convert-reference.js';
import { nopLogger } from '../../log/logger.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { flagStr } from './flags.js';

/** svc's db file of `dataDir`, refusing a data dir of the reference or a path that is none. */
export function memberDb(dataDir: string): string {
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) throw new CliError(`${dataDir} is not a directory`, Exit.Error);
  if (dataDirFormat(dataDir) === 'reference') {
    throw new CliError(`${dataDir} is a data dir of the reference (etcd), in its own format: use the reference's etcdutl on it, or start svc on it once (svc converts it into its format)`, Exit.Error);
  }
  const db = join(dataDir, 'member', 'snap', 'db');
  if (!existsSync(db)) throw new CliError(`${dataDir} holds no member database (${db} is missing): is it a member's data dir?`, Exit.Error);
  return db;
}

/** Takes the member's WAL lock, so no member runs on the data dir (or starts) meanwhile. */
async function lockDataDir(dataDir: string): Promise<DirLock | undefined> {
  const walDir = join(dataDir, 'member', 'wal');
  if (!existsSync(walDir)) return undefined;
  try {
    return await DirLock.acquire(walDir);
  } catch (e) {
    if (e instanceof WalError && e.code === 'WAL_LOCKED') {
      throw new CliError(`data dir ${dataDir} is in use by a running member (${e.message}): stop the member first, or defragment it while it runs with "svcctl defrag --endpoints=<its client URL>"`, Exit.Error);
    }
    throw e;
  }
}

/** defrag --data-dir: rewrites the member's db without its free pages (a compacting copy swapped in by rename). */
export async function defragDataDir(ctx: Ctx): Promise<void> {
  const dataDir = flagStr(ctx.p, 'data-dir', '');
  const db = memberDb(dataDir);
  const lock = await lockDataDir(dataDir);
  try {
    const before = statSync(db).size;
    const backend = openBackend(nopLogger, db, { batchIntervalMs: 0 });
    try {
      await backend.defrag();
    } finally {
      backend.close();
    }
    const after = statSync(db).size;
    ctx.io.out(`Finished defragmenting data dir ${dataDir} (db size ${before} -> ${after} bytes)\n`);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`failed to defragment data dir ${dataDir}: ${(e as Error).message}`, Exit.Error);
  } finally {
    await lock?.release();
  }
}
