// The storage version (3.6): meta/storageVersion in the db, "3.6.0"-style. The monitor of each member raises it to
// the cluster version once that reaches this member's line; going back to 3.5 removes the key (a downgrade).
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import { compareMinor, minorOf } from '../releases.js';

export const STORAGE_VERSION_KEY = new TextEncoder().encode('storageVersion');

/** The storage version as the reference detects it: meta/storageVersion, else "3.5.0" when the db has a term
 *  (3.5 wrote it), else undefined ("unknown": 3.4 data or a db nothing was committed to yet). */
export function detectStorageVersion(backend: Pick<Backend, 'readTx' | 'consistentTerm'>): string | undefined {
  const v = backend.readTx().get('meta', STORAGE_VERSION_KEY);
  if (v) return Buffer.from(v).toString('utf8');
  return backend.consistentTerm() > 0 ? '3.5.0' : undefined;
}

/**
 * Migrate the db's storage version to `minor` ("3.6", or "3.5" to downgrade): the key set to "<minor>.0", or
 * removed for 3.5 and below. Logs as the reference; returns whether anything changed. Also the step a downgrade
 * takes before the binaries go back.
 */
export function setStorageVersion(backend: Pick<Backend, 'readTx' | 'batchTx' | 'consistentTerm' | 'forceCommit'>, minor: string, logger: Logger): boolean {
  const current = detectStorageVersion(backend);
  if (current !== undefined && minorOf(current) === minor) return false;
  if (current !== undefined && backend.readTx().get('meta', STORAGE_VERSION_KEY)) {
    logger.info('cluster version differs from storage version.', { 'cluster-version': `${minor}.0`, 'storage-version': current });
  }
  const tx = backend.batchTx();
  if (compareMinor(minor, '3.6') >= 0) tx.put('meta', STORAGE_VERSION_KEY, Buffer.from(`${minor}.0`));
  else tx.delete('meta', STORAGE_VERSION_KEY);
  tx.end();
  backend.forceCommit();
  logger.info('updated storage version', { 'new-storage-version': `${minor}.0` });
  return true;
}

/** The monitor's step: raise the storage version to a cluster version of 3.6 or more (up to this member's line).
 *  Only upward: lowering it is the downgrade's own step (setStorageVersion to "3.5"), never a replayed old version. */
export function followClusterVersion(backend: Parameters<typeof setStorageVersion>[0], clusterVersion: string | undefined, localMinor: string, logger: Logger): void {
  if (clusterVersion === undefined || compareMinor(clusterVersion, '3.6') < 0 || compareMinor(clusterVersion, localMinor) > 0) return;
  const current = detectStorageVersion(backend);
  if (current !== undefined && compareMinor(current, clusterVersion) >= 0) return;
  setStorageVersion(backend, clusterVersion, logger);
}
