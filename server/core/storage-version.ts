// The storage version (3.6+): meta/storageVersion records which release's schema the db holds ("3.6.0"); absent in
// a 3.5 db. Every member brings it to the cluster version, so a downgrade lowers it before the binaries are swapped.
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import type { DowngradeInfo } from '../cluster/downgrade.js';
import { compareMinor, minorOf } from '../releases.js';

export const STORAGE_VERSION_KEY = new TextEncoder().encode('storageVersion');

/** The db's storage version as "3.6"; undefined: absent (a 3.5 schema). */
export function storageVersionInDb(backend: Pick<Backend, 'readTx'>): string | undefined {
  const v = backend.readTx().get('meta', STORAGE_VERSION_KEY);
  return v ? minorOf(Buffer.from(v).toString('utf8')) : undefined;
}

/** The storage version monitor's step: migrate the db's schema to the cluster version (3.5: the key removed). */
export function updateStorageVersion(backend: Pick<Backend, 'readTx' | 'batchTx'>, clusterVersion: string | undefined, job: DowngradeInfo, serverVersion: string, logger: Logger): void {
  if (clusterVersion === undefined || clusterVersion === '3.0') return;
  const stored = storageVersionInDb(backend);
  if ((stored ?? '3.5') === clusterVersion) return;
  if (stored !== undefined) logger.info('cluster version differs from storage version.', { 'cluster-version': `${clusterVersion}.0`, 'storage-version': `${stored}.0` });
  const tx = backend.batchTx();
  if (compareMinor(clusterVersion, '3.6') >= 0) tx.put('meta', STORAGE_VERSION_KEY, Buffer.from(`${clusterVersion}.0`));
  else tx.delete('meta', STORAGE_VERSION_KEY);
  tx.end();
  logger.info('updated storage version', { 'new-storage-version': `${clusterVersion}.0` });
  if (job.enabled) logger.info('The server is ready to downgrade', { 'target-version': job.targetVersion, 'server-version': serverVersion });
}
