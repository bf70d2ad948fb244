// Text formats of the reference's command-line client that come from its Go libraries: Go durations
// ("2.55ms"), humanized SI byte sizes ("45 kB"), hex ids, ASCII tables, and encoding/json of its
// response structs (64-bit integers as bare numbers, bytes as base64, zero fields omitted, proto field order).

/** Go's time.Duration.String() for a duration in nanoseconds. */
export function goDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  const sign = neg ? '-' : '';
  const frac = (v: bigint, digits: number): string => {
    // v in units of 10^-digits; trailing zeros dropped.
    const s = v.toString().padStart(digits + 1, '0');
    const int = s.slice(0, s.length - digits);
    const f = s.slice(s.length - digits).replace(/0+$/, '');
    return f ? `${int}.${f}` : int;
  };
  if (u < 1000n) return `${sign}${u}ns`;
  if (u < 1000000n) return `${sign}${frac(u, 3)}µs`;
  if (u < 1000000000n) return `${sign}${frac(u, 6)}ms`;
  let out = '';
  const h = u / 3600000000000n;
  u -= h * 3600000000000n;
  const m = u / 60000000000n;
  u -= m * 60000000000n;
  if (h > 0n) out += `${h}h`;
  if (h > 0n || m > 0n) out += `${m}m`;
  out += `${frac(u, 9)}s`;
  return sign + out;
}

/** Parses a Go duration ("2s", "500ms", "1m30s", or a bare number of seconds) into milliseconds. */
export function parseGoDuration(s: string): number {
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  let pos = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * unit[m[2]];
    pos = re.lastIndex;
  }
  if (pos !== s.length || s === '') throw new Error(`time: invalid duration "${s}"`);
  return total;
}

/** (kept beside the log fields, which use it too) */
export { humanizeBytes } from '../../log/fields.js';

/** Lower-case hex of a uint64 given as a decimal string, without padding (Go's %x). */
export function hexId(id: string | bigint): string {
  return BigInt(id).toString(16);
}

/** Go's %016x. */
export function hex16(id: string | bigint): string {
  return BigInt.asUintN(64, BigInt(id)).toString(16).padStart(16, '0');
}

/** The reference's --hex rendering of bytes: "\x61\x62". */
export function hexBytes(b: Uint8Array): string {
  return Array.from(b, (x) => `\\x${x.toString(16).padStart(2, '0')}`).join('');
}

/** An ASCII table as the reference prints it: centred upper-case headers, right-aligned cells. */
export function renderTable(header: string[], rows: string[][]): string {
  const hdr = header.map((h) => h.toUpperCase());
  const widths = hdr.map((h, i) => Math.max(h.length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const sep = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+\n`;
  const centre = (s: string, w: number) => {
    const gap = w - s.length;
    const left = Math.floor(gap / 2);
    return ' '.repeat(left) + s + ' '.repeat(gap - left);
  };
  let out = sep;
  out += `|${hdr.map((h, i) => ` ${centre(h, widths[i])} `).join('|')}|\n`;
  out += sep;
  for (const r of rows) out += `|${widths.map((w, i) => ` ${(r[i] ?? '').padStart(w + (r[i] ?? '').length - [...(r[i] ?? '')].length)} `).join('|')}|\n`;
  if (rows.length > 0) out += sep;
  return out;
}

// Fields that are 64-bit integers on the wire (decoded as decimal strings) and so print as JSON numbers.
const INT64_FIELDS = new Set([
  'cluster_id', 'member_id', 'revision', 'raft_term', 'create_revision', 'mod_revision', 'version', 'lease', 'count',
  'deleted', 'ID', 'TTL', 'grantedTTL', 'dbSize', 'leader', 'raftIndex', 'raftTerm', 'raftAppliedIndex', 'dbSizeInUse',
  'compact_revision', 'watch_id', 'memberID', 'authRevision',
]);

// The order fields appear in across the reference's messages (each message's fields keep their proto order).
const FIELD_ORDER = [
  'header', 'cluster_id', 'member_id', 'revision', 'raft_term', 'key', 'create_revision', 'mod_revision', 'version', 'value',
  'lease', 'kvs', 'more', 'count', 'prev_kv', 'deleted', 'prev_kvs', 'succeeded', 'responses', 'Response', 'response_range',
  'response_put', 'response_delete_range', 'response_txn', 'hash', 'watch_id', 'created', 'canceled', 'compact_revision',
  'cancel_reason', 'fragment', 'events', 'type', 'kv', 'ID', 'TTL', 'grantedTTL', 'keys', 'leases', 'name', 'peerURLs',
  'clientURLs', 'member', 'members', 'dbSize', 'leader', 'raftIndex', 'raftTerm', 'raftAppliedIndex', 'errors',
  'dbSizeInUse', 'isLearner', 'alarms', 'alarm', 'enabled', 'authRevision', 'token', 'roles', 'users', 'perm', 'permType',
  'range_end',
];
const rank = new Map(FIELD_ORDER.map((f, i) => [f, i]));

// Enums print as their numbers in the reference's JSON.
const ENUMS: Record<string, Record<string, number>> = {
  type: { PUT: 0, DELETE: 1 },
  alarm: { NONE: 0, NOSPACE: 1, CORRUPT: 2 },
  permType: { READ: 0, WRITE: 1, READWRITE: 2 },
};

function isZero(v: unknown): boolean {
  return (
    v === null || v === undefined || v === false || v === 0 || v === '' || v === '0' ||
    (Array.isArray(v) && v.length === 0) || (Buffer.isBuffer(v) && v.length === 0)
  );
}

/** encoding/json of a decoded response as the reference prints it (`-w json`). */
export function goJson(v: unknown, field?: string): string {
  if (v === null || v === undefined) return 'null';
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return JSON.stringify(Buffer.from(v).toString('base64'));
  if (Array.isArray(v)) return `[${v.map((x) => goJson(x, field)).join(',')}]`;
  if (typeof v === 'string') {
    if (field && ENUMS[field] && v in ENUMS[field]) return String(ENUMS[field][v]);
    if (field && INT64_FIELDS.has(field) && /^-?\d+$/.test(v)) return v;
    return JSON.stringify(v);
  }
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    // A oneof's virtual name property is not a field; its member is nested under "Response" as in Go.
    const entries = Object.entries(o).filter(([k, x]) => k !== 'response' && k !== 'request' && k !== 'target_union' && !isZero(ENUMS[k] && typeof x === 'string' ? ENUMS[k][x] : x));
    entries.sort(([a], [b]) => (rank.get(a) ?? 999) - (rank.get(b) ?? 999));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${goJson(x, k)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Reshapes a TxnResponse's ops into Go's oneof JSON layout ({"Response":{"response_put":...}}). */
export function txnForJson(r: { responses?: Array<Record<string, unknown>> } & Record<string, unknown>): Record<string, unknown> {
  return {
    ...r,
    responses: (r.responses ?? []).map((op) => {
      const which = op.response as string | undefined;
      const inner = which ? op[which] : undefined;
      const body = which === 'response_txn' && inner ? txnForJson(inner as Record<string, unknown>) : inner;
      return which ? { Response: { [which]: body } } : {};
    }),
  };
}
