// The server's results as wire messages (the requests' way in is core/requests.ts, which the log's conversion of a
// reference data dir shares), and what a transaction's ops tell of it.
import type { TxnRequest } from '../../core/requests.js';
import type { KeyValue } from '../../mvcc/kv.js';
import type { Outgoing } from '../../wire/index.js';

export function kvToPb(kv: KeyValue): Outgoing<'mvccpb.KeyValue'> {
  return {
    key: kv.key,
    create_revision: kv.createRevision,
    mod_revision: kv.modRevision,
    version: kv.version,
    value: kv.value,
    // most keys have no lease: a number 0 spares protobufjs parsing the string "0" into a Long for every key
    lease: kv.lease === 0n ? 0 : kv.lease.toString(),
  };
}

/** Is the transaction free of writes (so it can be served as a read)? */
export function txnIsReadOnly(t: TxnRequest): boolean {
  return [...t.success, ...t.failure].every((op) => 'range' in op || ('txn' in op && txnIsReadOnly(op.txn)));
}
