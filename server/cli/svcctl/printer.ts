// Printing responses the way the reference's client does, per output format (simple, json, fields, table).
import type * as T from '../../client/types.js';
import type { Ctx } from './context.js';
import { CliError, Exit } from './errors.js';
import { goJson, hex16, hexBytes, hexId, humanizeBytes, renderTable, txnForJson } from './format.js';

/** printKV: key line (unless value-only) and value line; --hex prints "\x.." escapes. */
export function kvLines(ctx: Ctx, kv: T.KeyValue, valueOnly = false): string {
  const k = ctx.hex ? hexBytes(kv.key) : kv.key.toString('utf8');
  const v = ctx.hex ? hexBytes(kv.value) : kv.value.toString('utf8');
  return valueOnly ? `${v}\n` : `${k}\n${v}\n`;
}

function headerFields(h: T.ResponseHeader | null | undefined): string {
  if (!h) return '';
  return `"ClusterID" : ${h.cluster_id}\n"MemberID" : ${h.member_id}\n"Revision" : ${h.revision}\n"RaftTerm" : ${h.raft_term}\n`;
}

function kvFields(kv: T.KeyValue, prefix = ''): string {
  return (
    `"${prefix}Key" : ${JSON.stringify(kv.key.toString('utf8'))}\n"${prefix}CreateRevision" : ${kv.create_revision}\n` +
    `"${prefix}ModRevision" : ${kv.mod_revision}\n"${prefix}Version" : ${kv.version}\n` +
    `"${prefix}Value" : ${JSON.stringify(kv.value.toString('utf8'))}\n"${prefix}Lease" : ${kv.lease}\n`
  );
}

function json(ctx: Ctx, v: unknown): void {
  ctx.io.out(`${goJson(v)}\n`);
}

export function printGet(ctx: Ctx, r: T.RangeResponse, valueOnly: boolean): void {
  switch (ctx.format) {
    case 'json': return json(ctx, r);
    case 'fields': {
      let s = headerFields(r.header);
      for (const kv of r.kvs) s += kvFields(kv);
      s += `"More" : ${r.more}\n"Count" : ${r.count}\n`;
      return ctx.io.out(s);
    }
    case 'table': throw new CliError('table not supported as output format', Exit.BadFeature);
    default: for (const kv of r.kvs) ctx.io.out(kvLines(ctx, kv, valueOnly));
  }
}

export function printPut(ctx: Ctx, r: T.PutResponse): void {
  switch (ctx.format) {
    case 'json': return json(ctx, r);
    case 'fields': return ctx.io.out(headerFields(r.header) + (r.prev_kv ? kvFields(r.prev_kv, 'Prev') : ''));
    case 'table': throw new CliError('table not supported as output format', Exit.BadFeature);
    default:
      ctx.io.out('OK\n');
      if (r.prev_kv) ctx.io.out(kvLines(ctx, r.prev_kv));
  }
}

export function printDel(ctx: Ctx, r: T.DeleteRangeResponse): void {
  switch (ctx.format) {
    case 'json': return json(ctx, r);
    case 'fields': {
      let s = headerFields(r.header) + `"Deleted" : ${r.deleted}\n`;
      for (const kv of r.prev_kvs) s += kvFields(kv, 'Prev');
      return ctx.io.out(s);
    }
    case 'table': throw new CliError('table not supported as output format', Exit.BadFeature);
    default:
      ctx.io.out(`${r.deleted}\n`);
      for (const kv of r.prev_kvs) ctx.io.out(kvLines(ctx, kv));
  }
}

export function printTxn(ctx: Ctx, r: T.TxnResponse): void {
  switch (ctx.format) {
    case 'json': {
      // The reference prints the oneof wrapper with Go field names (ResponseRange, ResponsePut, ...).
      const names: Record<string, string> = { response_range: 'ResponseRange', response_put: 'ResponsePut', response_delete_range: 'ResponseDeleteRange', response_txn: 'ResponseTxn' };
      const shaped = txnForJson(r as unknown as Record<string, unknown>) as { responses: Array<{ Response?: Record<string, unknown> }> };
      const fix = (t: { responses: Array<{ Response?: Record<string, unknown> }> }): void => {
        for (const op of t.responses) {
          if (!op.Response) continue;
          const [k, v] = Object.entries(op.Response)[0];
          if (k === 'response_txn' && v) fix(v as { responses: Array<{ Response?: Record<string, unknown> }> });
          op.Response = { [names[k] ?? k]: v };
        }
      };
      fix(shaped);
      return json(ctx, shaped);
    }
    case 'table': throw new CliError('table not supported as output format', Exit.BadFeature);
    default: {
      ctx.io.out(r.succeeded ? 'SUCCESS\n' : 'FAILURE\n');
      for (const op of r.responses) {
        ctx.io.out('\n');
        if (op.response_range) printGet(ctx, op.response_range, false);
        else if (op.response_put) printPut(ctx, op.response_put);
        else if (op.response_delete_range) printDel(ctx, op.response_delete_range);
        else ctx.io.out(`unexpected response ${goJson(op)}\n`);
      }
    }
  }
}

export function printWatch(ctx: Ctx, r: T.WatchResponse): void {
  switch (ctx.format) {
    case 'json': {
      // clientv3.WatchResponse: Go field names, the header always present, the flags always printed.
      const h = goJson(r.header);
      ctx.io.out(`{"Header":${h},"Events":${r.events.length ? goJson(r.events) : 'null'},"CompactRevision":${r.compact_revision || 0},"Canceled":${r.canceled},"Created":${r.created}}\n`);
      return;
    }
    case 'fields': {
      let s = headerFields(r.header);
      for (const e of r.events) {
        s += `"Type" : ${JSON.stringify(e.type)}\n` + kvFields(e.kv);
        if (e.prev_kv) s += kvFields(e.prev_kv, 'Prev');
      }
      return ctx.io.out(s);
    }
    default:
      for (const e of r.events) {
        ctx.io.out(`${e.type}\n`);
        if (e.prev_kv) ctx.io.out(kvLines(ctx, e.prev_kv));
        ctx.io.out(kvLines(ctx, e.kv));
      }
  }
}

export function memberRows(r: T.MemberListResponse): string[][] {
  return r.members.map((m) => [
    hexId(m.ID),
    m.name === '' ? 'unstarted' : 'started',
    m.name,
    m.peerURLs.join(','),
    m.clientURLs.join(','),
    String(m.isLearner),
  ]);
}

export function printMemberList(ctx: Ctx, r: T.MemberListResponse): void {
  const hdr = ['ID', 'Status', 'Name', 'Peer Addrs', 'Client Addrs', 'Is Learner'];
  switch (ctx.format) {
    case 'json': return json(ctx, r);
    case 'table': return ctx.io.out(renderTable(hdr, memberRows(r)));
    case 'fields': {
      let s = headerFields(r.header);
      for (const m of r.members) {
        s += `"ID" : ${m.ID}\n"Name" : ${JSON.stringify(m.name)}\n"PeerURL" : ${JSON.stringify(m.peerURLs.join(','))}\n`;
        s += `"ClientURL" : ${JSON.stringify(m.clientURLs.join(','))}\n"IsLearner" : ${m.isLearner}\n\n`;
      }
      return ctx.io.out(s);
    }
    default: for (const row of memberRows(r)) ctx.io.out(`${row.join(', ')}\n`);
  }
}

export interface EpStatus {
  Endpoint: string;
  Status: T.StatusResponse;
}

export function printEndpointStatus(ctx: Ctx, list: EpStatus[]): void {
  const hdr = ['endpoint', 'ID', 'version', 'db size', 'is leader', 'is learner', 'raft term', 'raft index', 'raft applied index', 'errors'];
  const rows = list.map(({ Endpoint, Status: s }) => [
    Endpoint,
    hexId(s.header.member_id),
    s.version,
    humanizeBytes(Number(s.dbSize)),
    String(s.leader === s.header.member_id),
    String(s.isLearner),
    s.raftTerm,
    s.raftIndex,
    s.raftAppliedIndex,
    s.errors.join(', '),
  ]);
  switch (ctx.format) {
    case 'json': return ctx.io.out(`[${list.map((e) => `{"Endpoint":${JSON.stringify(e.Endpoint)},"Status":${goJson(e.Status)}}`).join(',')}]\n`);
    case 'table': return ctx.io.out(renderTable(hdr, rows));
    case 'fields': {
      let s = '';
      for (const { Endpoint, Status: st } of list) {
        s += headerFields(st.header);
        s += `"Version" : ${JSON.stringify(st.version)}\n"DBSize" : ${st.dbSize}\n"Leader" : ${st.leader}\n"IsLearner" : ${st.isLearner}\n`;
        s += `"RaftIndex" : ${st.raftIndex}\n"RaftTerm" : ${st.raftTerm}\n"RaftAppliedIndex" : ${st.raftAppliedIndex}\n`;
        s += `"Errors" : ${JSON.stringify(st.errors)}\n"Endpoint" : ${JSON.stringify(Endpoint)}\n\n`;
      }
      return ctx.io.out(s);
    }
    default: for (const row of rows) ctx.io.out(`${row.join(', ')}\n`);
  }
}

export interface EpHashKV {
  Endpoint: string;
  HashKV: T.HashKVResponse;
}

export function printEndpointHashKV(ctx: Ctx, list: EpHashKV[]): void {
  const rows = list.map((e) => [e.Endpoint, String(e.HashKV.hash)]);
  switch (ctx.format) {
    case 'json': return ctx.io.out(`[${list.map((e) => `{"Endpoint":${JSON.stringify(e.Endpoint)},"HashKV":${goJson(e.HashKV)}}`).join(',')}]\n`);
    case 'table': return ctx.io.out(renderTable(['endpoint', 'hash'], rows));
    case 'fields': {
      let s = '';
      for (const e of list) s += headerFields(e.HashKV.header) + `"Endpoint" : ${JSON.stringify(e.Endpoint)}\n"Hash" : ${e.HashKV.hash}\n\n`;
      return ctx.io.out(s);
    }
    default: for (const row of rows) ctx.io.out(`${row.join(', ')}\n`);
  }
}

export interface EpHealth {
  endpoint: string;
  health: boolean;
  took: string;
  error?: string;
}

export function printEndpointHealth(ctx: Ctx, list: EpHealth[]): void {
  switch (ctx.format) {
    case 'json': return ctx.io.out(`[${list.map((h) => JSON.stringify(h.error ? h : { endpoint: h.endpoint, health: h.health, took: h.took })).join(',')}]\n`);
    case 'table': {
      const rows = list.map((h) => [h.endpoint, String(h.health), h.took, h.error ?? '']);
      return ctx.io.out(renderTable(['endpoint', 'health', 'took', 'error'], rows));
    }
    default:
      // The reference writes these lines to standard error.
      for (const h of list) {
        if (!h.error) ctx.io.err(`${h.endpoint} is healthy: successfully committed proposal: took = ${h.took}\n`);
        else ctx.io.err(`${h.endpoint} is unhealthy: failed to commit proposal: ${h.error}\n`);
      }
  }
}

/** The reference's %+v of an AlarmMember: proto text format. */
export function alarmText(a: T.AlarmMember): string {
  return `memberID:${a.memberID} alarm:${a.alarm} `;
}

export function printAlarm(ctx: Ctx, r: T.AlarmResponse): void {
  switch (ctx.format) {
    case 'json': return json(ctx, { alarms: r.alarms });
    case 'table': throw new CliError('table not supported as output format', Exit.BadFeature);
    default: for (const a of r.alarms) ctx.io.out(`${alarmText(a)}\n`);
  }
}

export function printGrant(ctx: Ctx, r: T.LeaseGrantResponse): void {
  if (ctx.format === 'json') {
    const h = r.header;
    return ctx.io.out(`{"cluster_id":${h.cluster_id},"member_id":${h.member_id},"revision":${h.revision},"raft_term":${h.raft_term},"ID":${r.ID},"TTL":${r.TTL},"Error":${JSON.stringify(r.error)}}\n`);
  }
  ctx.io.out(`lease ${hex16(r.ID)} granted with TTL(${r.TTL}s)\n`);
}

export function printTimeToLive(ctx: Ctx, r: T.LeaseTimeToLiveResponse, keys: boolean): void {
  if (ctx.format === 'json') {
    const h = r.header;
    const ks = keys ? `[${r.keys.map((k) => JSON.stringify(k.toString('base64'))).join(',')}]` : 'null';
    return ctx.io.out(`{"cluster_id":${h.cluster_id},"member_id":${h.member_id},"revision":${h.revision},"raft_term":${h.raft_term},"id":${r.ID},"ttl":${r.TTL},"granted-ttl":${r.grantedTTL},"keys":${ks}}\n`);
  }
  if (r.grantedTTL === '0' && r.TTL === '-1') return ctx.io.out(`lease ${hex16(r.ID)} already expired\n`);
  let txt = `lease ${hex16(r.ID)} granted with TTL(${r.grantedTTL}s), remaining(${r.TTL}s)`;
  if (keys) txt += `, attached keys([${r.keys.map((k) => k.toString('utf8')).join(' ')}])`;
  ctx.io.out(`${txt}\n`);
}

export function printLeases(ctx: Ctx, r: T.LeaseLeasesResponse): void {
  if (ctx.format === 'json') {
    const h = r.header;
    const ls = r.leases.map((l) => `{"id":${l.ID}}`).join(',');
    return ctx.io.out(`{"cluster_id":${h.cluster_id},"member_id":${h.member_id},"revision":${h.revision},"raft_term":${h.raft_term},"leases":[${ls}]}\n`);
  }
  ctx.io.out(`found ${r.leases.length} leases\n`);
  for (const l of r.leases) ctx.io.out(`${hex16(l.ID)}\n`);
}

export function printKeepAlive(ctx: Ctx, r: T.LeaseKeepAliveResponse): void {
  if (ctx.format === 'json') {
    const h = r.header;
    return ctx.io.out(`{"cluster_id":${h.cluster_id},"member_id":${h.member_id},"revision":${h.revision},"raft_term":${h.raft_term},"ID":${r.ID},"TTL":${r.TTL}}\n`);
  }
  ctx.io.out(`lease ${hex16(r.ID)} keepalived with TTL(${r.TTL})\n`);
}

/** For responses printed by a sentence in simple mode: JSON shape otherwise. */
export function printOr(ctx: Ctx, r: unknown, simple: string): void {
  if (ctx.format === 'json') return json(ctx, r);
  ctx.io.out(simple);
}
