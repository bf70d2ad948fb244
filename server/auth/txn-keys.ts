import type { RequestOp, TxnRequest } from '../core/requests.js';
import type { AuthStore } from './store.js';
import type { TokenInfo } from './tokens.js';

const EMPTY = Buffer.alloc(0);

/**
 * Checks every key a txn reads or writes (its compares, both branches, nested txns) as AuthStore.checkKeys; a
 * delete that returns the deleted pairs (prev_kv) reads them too, as the reference. Apart from the store because
 * the request shapes name the store's operations.
 */
export function checkTxnKeys(store: Pick<AuthStore, 'checkKeys'>, info: TokenInfo, t: TxnRequest): void {
  const check = (key: Uint8Array, end: Uint8Array, write: boolean) => store.checkKeys(info, Buffer.from(key), Buffer.from(end), write);
  for (const c of t.compare) check(c.key, c.rangeEnd, false);
  const op = (o: RequestOp) => {
    if ('range' in o) check(o.range.key, o.range.rangeEnd, false);
    else if ('put' in o) check(o.put.key, EMPTY, true);
    else if ('deleteRange' in o) {
      if (o.deleteRange.prevKv) check(o.deleteRange.key, o.deleteRange.rangeEnd, false);
      check(o.deleteRange.key, o.deleteRange.rangeEnd, true);
    } else checkTxnKeys(store, info, o.txn);
  };
  t.success.forEach(op);
  t.failure.forEach(op);
}
