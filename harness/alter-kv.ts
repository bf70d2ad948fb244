// Alters a stopped svc member's data behind its back: the newest stored revision of one key gets another value in
// place (same revision, same key), which only a KV hash comparison can notice. For the corruption tests.
import { join } from 'node:path';
import { HarnessError } from './errors.js';
import { openBackend } from '../server/storage/backend.js';
import { decodeKv, encodeKv } from '../server/mvcc/kv.js';
import { nopLogger } from '../server/log/logger.js';

/** Rewrites the value of `key`'s newest stored revision in the (stopped) member's db under `dataDir`. */
export function alterStoredValue(dataDir: string, key: string, value: string): void {
  const be = openBackend(nopLogger, join(dataDir, 'member', 'snap', 'db'), { batchIntervalMs: 0 });
  try {
    const rows = be.readTx().range('key', new Uint8Array([0]), null).filter((r) => Buffer.from(decodeKv(r.value).key).toString() === key);
    const last = rows.at(-1);
    if (!last) throw new HarnessError('NO_MEMBER', `no stored revision of ${key} in ${dataDir}`);
    const tx = be.batchTx();
    tx.put('key', last.key, encodeKv({ ...decodeKv(last.value), value: new Uint8Array(Buffer.from(value)) }));
    tx.end();
  } finally {
    be.close();
  }
}
