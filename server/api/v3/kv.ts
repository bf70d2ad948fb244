// The KV service (etcdserverpb.KV): reads served locally (after a read barrier unless serializable), writes
// proposed through the log with the caller's user and auth revision (checked again when applied).
import { Errors, ServerError, Code } from '../../core/errors.js';
import { deleteFromPb, putFromPb, rangeFromPb, txnFromPb, type RequestOp, type TxnRequest } from '../../core/requests.js';
import type { RangeResult, PutResult, DeleteResult, TxnResult, OpResult } from '../../core/state-machine.js';
import type { KvReads, Proposals, QuotaGuard, ReadBarrier } from '../../core/interfaces.js';
import type { AuthGate } from './auth-gate.js';
import type { Headers } from './headers.js';
import type { Outgoing } from '../../wire/index.js';
import type { KvService } from './service-methods.js';
import { kvToPb, txnIsReadOnly } from './convert.js';

export interface KvDeps {
  reads: KvReads;
  barrier: ReadBarrier;
  proposals: Proposals;
  quota: QuotaGuard;
  gate: AuthGate;
  headers: Headers;
  maxTxnOps: number;
}

const EMPTY = new Uint8Array(0);

/** Deepest txn nesting accepted (protobuf encoders refuse answers nested much deeper). */
export const MAX_TXN_DEPTH = 32;

export function kvService(d: KvDeps): KvService {
  const { gate, headers, proposals } = d;
  const header = (rev?: number) => headers.header(rev);

  const rangeToPb = (res: RangeResult): Outgoing<'etcdserverpb.RangeResponse'> => ({ header: header(res.revision), kvs: res.kvs.map(kvToPb), more: res.more, count: res.count });
  const putToPb = (res: PutResult): Outgoing<'etcdserverpb.PutResponse'> => {
    const out: Outgoing<'etcdserverpb.PutResponse'> = { header: header(res.revision) };
    if (res.prevKv) out.prev_kv = kvToPb(res.prevKv);
    return out;
  };
  const deleteToPb = (res: DeleteResult): Outgoing<'etcdserverpb.DeleteRangeResponse'> => ({ header: header(res.revision), deleted: res.deleted, prev_kvs: res.prevKvs.map(kvToPb) });
  const txnToPb = (res: TxnResult): Outgoing<'etcdserverpb.TxnResponse'> => ({
    header: header(res.revision),
    succeeded: res.succeeded,
    responses: res.responses.map((r: OpResult) => {
      if ('range' in r) return { response_range: rangeToPb(r.range) };
      if ('put' in r) return { response_put: putToPb(r.put) };
      if ('deleteRange' in r) return { response_delete_range: deleteToPb(r.deleteRange) };
      return { response_txn: txnToPb(r.txn) };
    }),
  });

  return {
    Range: async (req, meta) => {
      const r = rangeFromPb(req);
      gate.requireKeys(meta, r.key, r.rangeEnd, false);
      if (!r.serializable) await d.barrier.linearizableReadNotify();
      return rangeToPb(d.reads.range(r));
    },

    Put: async (req, meta) => {
      const p = putFromPb(req);
      gate.requireKeys(meta, p.key, EMPTY, true);
      if (p.key.length === 0) throw Errors.emptyKey();
      if (p.ignoreValue && p.value.length > 0) throw Errors.valueProvided();
      if (p.ignoreLease && p.lease !== 0n) throw Errors.leaseProvided();
      const refused = d.quota.checkQuota(p.key.length + p.value.length);
      if (refused) await refused;
      const res = await proposals.propose<PutResult>({ id: proposals.nextRequestId(), header: gate.header(meta), kind: 'put', put: p });
      return putToPb(res);
    },

    DeleteRange: async (req, meta) => {
      const del = deleteFromPb(req);
      gate.requireKeys(meta, del.key, del.rangeEnd, true);
      if (del.key.length === 0) throw Errors.emptyKey();
      const res = await proposals.propose<DeleteResult>({ id: proposals.nextRequestId(), header: gate.header(meta), kind: 'deleteRange', deleteRange: del });
      return deleteToPb(res);
    },

    Txn: async (req, meta) => {
      const t = txnFromPb(req);
      checkTxn(t, d.maxTxnOps);
      gate.requireTxn(meta, t);
      let res: TxnResult;
      if (txnIsReadOnly(t)) {
        const serializable = [...t.success, ...t.failure].every((op) => !('range' in op) || op.range.serializable);
        if (!serializable) await d.barrier.linearizableReadNotify();
        res = d.reads.readOnlyTxn(t);
      } else {
        const refused = d.quota.checkQuota(0);
        if (refused) await refused;
        res = await proposals.propose<TxnResult>({ id: proposals.nextRequestId(), header: gate.header(meta), kind: 'txn', txn: t });
      }
      return txnToPb(res);
    },

    Compact: async (req, meta) => {
      gate.requireAdmin(meta);
      const revision = Number(req.revision ?? 0);
      const res = await proposals.propose<{ revision: number; done: Promise<void> }>({ id: proposals.nextRequestId(), kind: 'compaction', compaction: { revision, physical: !!req.physical } });
      // physical: answer only once the compacted revisions are gone from the db.
      if (req.physical) await res.done;
      return { header: header(res.revision) };
    },
  };
}

/** The reference's txn checks: op count, nesting, and no key written twice in one branch (nested txns included). */
export function checkTxn(t: TxnRequest, max: number, depth = 0): void {
  // The answer nests as deep as the request: past this depth it could not be encoded, so refuse it up front.
  if (depth > MAX_TXN_DEPTH) throw new ServerError(Code.InvalidArgument, `etcdserver: txn nesting deeper than ${MAX_TXN_DEPTH} levels`);
  if (t.compare.length > max || t.success.length > max || t.failure.length > max) throw Errors.tooManyOps();
  for (const c of t.compare) if (c.key.length === 0) throw Errors.emptyKey();
  const checkBranch = (ops: RequestOp[]) => {
    const puts = new Set<string>();
    const dels: Array<{ key: Uint8Array; end: Uint8Array }> = [];
    for (const op of ops) {
      if ('put' in op) {
        if (op.put.key.length === 0) throw Errors.emptyKey();
        const k = Buffer.from(op.put.key).toString('hex');
        if (puts.has(k)) throw Errors.duplicateKey();
        puts.add(k);
      } else if ('deleteRange' in op) {
        if (op.deleteRange.key.length === 0) throw Errors.emptyKey();
        dels.push({ key: op.deleteRange.key, end: op.deleteRange.rangeEnd });
      } else if ('range' in op) {
        if (op.range.key.length === 0) throw Errors.emptyKey();
      } else {
        checkTxn(op.txn, max, depth + 1);
        // Puts of nested txns (of either branch) count as puts of this branch, as the reference checks them.
        for (const k of nestedPutKeys(op.txn)) {
          if (puts.has(k)) throw Errors.duplicateKey();
          puts.add(k);
        }
      }
    }
    for (const k of puts) {
      const key = Buffer.from(k, 'hex');
      for (const del of dels) {
        const inRange = del.end.length === 0 ? Buffer.compare(key, Buffer.from(del.key)) === 0
          : Buffer.compare(key, Buffer.from(del.key)) >= 0 && (Buffer.from(del.end).equals(Buffer.from([0])) || Buffer.compare(key, Buffer.from(del.end)) < 0);
        if (inRange) throw Errors.duplicateKey();
      }
    }
  };
  checkBranch(t.success);
  checkBranch(t.failure);
}

/** Keys (hex) put anywhere inside a txn, in both branches. */
function nestedPutKeys(t: TxnRequest): Set<string> {
  const keys = new Set<string>();
  for (const op of [...t.success, ...t.failure]) {
    if ('put' in op) keys.add(Buffer.from(op.put.key).toString('hex'));
    else if ('txn' in op) for (const k of nestedPutKeys(op.txn)) keys.add(k);
  }
  return keys;
}
