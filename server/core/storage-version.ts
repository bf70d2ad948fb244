// The storage version (3.6+): meta/storageVersion records which release's schema the db holds ("3.6.0"); absent in
// a 3.5 db. Every member's monitor brings it to the cluster version, both ways: a downgrade lowers the cluster version
// first (the leader, while the job is enabled), so the db's schema is lowered before the binaries are swapped.
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import type { DowngradeInfo } from '../cluster/downgrade.js';
import { compareMinor, minorOf } from '../releases.js';

export const STORAGE_VERSION_KEY = new TextEncoder().encode('storageVersion');

/** The storage version as the reference detects it: meta/storageVersion, else "3.5.0" when the db has a term
 *  (3.5 wrote it), else undefined ("unknown": 3.4 data or a db nothing was committed to yet). */
export function detectStorageVersion(backend: Pick<Backend, 'readTx' | 'consistentTerm'>): string | undefined {
  const v = backend.readTx().get('meta', STORAGE_VERSION_KEY);
  if (v) return Buffer.from(v).toString('utf8');
  return backend.consistentTerm() > 0 ? '3.5.0' : undefined;
}

type StorageBackend = Pick<Backend, 'readTx' | 'batchTx' | 'consistentTerm' | 'forceCommit'>;

/**
 * Migrate the db's storage version to `minor` ("3.6", or "3.5" to downgrade): the key set to "<minor>.0", or
 * removed for 3.5 and below. Logs as the reference; returns whether anything changed.
 */
export function setStorageVersion(backend: StorageBackend, minor: string, logger: Logger): boolean {
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

/** The storage version monitor's step: the db's schema brought to the cluster version (never above this member's
 *  own line); with a downgrade enabled, the member then says it is ready. */
export function updateStorageVersion(backend: StorageBackend, clusterVersion: string | undefined, job: DowngradeInfo, serverVersion: string, logger: Logger): void {
  if (clusterVersion === undefined || clusterVersion === '3.0' || compareMinor(clusterVersion, minorOf(serverVersion)) > 0) return;
  // a 3.5 schema is the key's absence: nothing to write while it is absent
  if (compareMinor(clusterVersion, '3.6') < 0 && !backend.readTx().get('meta', STORAGE_VERSION_KEY)) return;
  if (!setStorageVersion(backend, clusterVersion, logger)) return;
  if (job.enabled) logger.info('The server is ready to downgrade', { 'target-version': job.targetVersion, 'server-version': serverVersion });
}
