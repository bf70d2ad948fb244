// How field values are written: bigint ids as hex like the reference's types.ID, marked durations as
// Go duration strings ("2.55ms"), errors as their message, URLs and dates as strings.

/** A field value rendered as a Go duration string. Create with duration(ms). */
export class Duration {
  constructor(readonly nanos: bigint) {}
  toString(): string {
    return formatGoDuration(this.nanos);
  }
  toJSON(): string {
    return formatGoDuration(this.nanos);
  }
}

/** Mark a number of milliseconds (fractions allowed) as a duration field. */
export function duration(ms: number): Duration {
  return new Duration(BigInt(Math.round(ms * 1e6)));
}

/** Mark a number of nanoseconds (e.g. from process.hrtime.bigint() differences) as a duration field. */
export function durationNs(ns: bigint): Duration {
  return new Duration(ns);
}

function frac(v: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const whole = v / scale;
  let f = (v % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  if (f !== '') f = '.' + f;
  return `${whole}${f}`;
}

/** Go's time.Duration.String(): "0s", "850ns", "1.5µs", "2.55ms", "1.2s", "1m30s", "2h0m0.5s". */
export function formatGoDuration(nanos: bigint): string {
  const neg = nanos < 0n;
  const u = neg ? -nanos : nanos;
  let out: string;
  if (u === 0n) out = '0s';
  else if (u < 1000n) out = `${u}ns`;
  else if (u < 1_000_000n) out = `${frac(u, 3)}µs`;
  else if (u < 1_000_000_000n) out = `${frac(u, 6)}ms`;
  else {
    const totalSec = u / 1_000_000_000n;
    const subSec = u % 1_000_000_000n;
    const s = frac((totalSec % 60n) * 1_000_000_000n + subSec, 9);
    const m = (totalSec / 60n) % 60n;
    const h = totalSec / 3600n;
    out = h > 0n ? `${h}h${m}m${s}s` : m > 0n ? `${m}m${s}s` : `${s}s`;
  }
  return neg ? '-' + out : out;
}

/** A value made JSON-safe for a field named `key`. */
export function fieldValue(key: string, v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return v;
    case 'bigint':
      return key.endsWith('-id') || key === 'id' ? v.toString(16) : v.toString(10);
    case 'undefined':
      return null;
    case 'object':
      if (v === null) return null;
      if (v instanceof Duration) return v.toString();
      if (v instanceof Error) return v.message;
      if (v instanceof URL) return v.toString();
      if (v instanceof Date) return v.toISOString();
      if (Array.isArray(v)) return v.map((x) => fieldValue(key, x));
      if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), fieldValue(String(k), x)]));
      if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
      return v;
    default:
      return String(v);
  }
}

function jsonReplacer(this: unknown, key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? fieldValue(key, v) : v;
}

/** JSON text of a field value (bigints nested in objects are handled too). */
export function fieldJson(key: string, v: unknown): string {
  // Fast paths for the common scalar fields; the replacer only matters inside objects.
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const out = JSON.stringify(fieldValue(key, v), jsonReplacer);
  return out === undefined ? 'null' : out;
}

const PLAIN = /^[A-Za-z0-9_.:/@+,\-[\]()]+$/;

/** Text of a field value for key=value rendering: bare when it is a simple token, quoted otherwise. */
export function fieldText(key: string, v: unknown): string {
  const x = fieldValue(key, v);
  if (typeof x === 'string') return PLAIN.test(x) ? x : JSON.stringify(x);
  if (typeof x === 'number' || typeof x === 'boolean' || x === null) return String(x);
  return JSON.stringify(x, jsonReplacer) ?? 'null';
}

/** Go's %.Nf: round half to even on exact halves, like strconv. */
function goFixed(v: number, digits: number): string {
  const scaled = v * 10 ** digits;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  let r = Math.round(scaled);
  if (Math.abs(diff - 0.5) < 1e-9) r = floor % 2 === 0 ? floor : floor + 1;
  return (r / 10 ** digits).toFixed(digits);
}

/** go-humanize Bytes(): SI units ("20 kB", "2.1 MB", "512 B"). */
export function humanizeBytes(n: number): string {
  if (n < 10) return `${n} B`;
  const sizes = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.floor(Math.log(n) / Math.log(1000));
  const val = Math.floor((n / 1000 ** e) * 10 + 0.5) / 10;
  return `${goFixed(val, val < 10 ? 1 : 0)} ${sizes[e]}`;
}
