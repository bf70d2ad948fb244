// Turning flag text (or YAML values) into typed values, with errors that name the flag, say what
// was wrong and what is allowed.
import { ConfigError } from './errors.js';

/** Where a value came from, for messages: "--name", "SVC_NAME" or `config file key "name"`. */
export interface Origin {
  flag: string;
  where: string;
}

function show(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw);
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch {
    return String(raw);
  }
}

export function invalid(o: Origin, raw: unknown, why: string): ConfigError {
  return new ConfigError(`invalid value ${show(raw)} for ${o.where}: ${why}`, o.flag);
}

/** A scalar as text (YAML numbers and booleans are accepted where text is expected). */
export function asText(o: Origin, raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw invalid(o, raw, 'expected a single value (text), not a list or mapping');
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's boolean forms: 1 t T TRUE true True / 0 f F FALSE false False. */
export function parseBool(o: Origin, raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  const s = asText(o, raw);
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  throw invalid(o, raw, 'expected a boolean (true or false)');
}

/** A non-negative (or, with `signed`, any) integer within the safe range; decimal or 0x hex. */
export function parseInteger(o: Origin, raw: unknown, signed: boolean): number {
  const what = signed ? 'an integer' : 'a non-negative integer';
  let n: number;
  if (typeof raw === 'number') n = raw;
  else {
    const s = asText(o, raw).trim();
    const m = /^([+-]?)(0[xX][0-9a-fA-F]+|\d+)$/.exec(s);
    if (!m) throw invalid(o, raw, `expected ${what}`);
    n = Number(m[2]) * (m[1] === '-' ? -1 : 1);
  }
  if (!Number.isSafeInteger(n)) throw invalid(o, raw, `expected ${what} (at most ${Number.MAX_SAFE_INTEGER})`);
  if (!signed && n < 0) throw invalid(o, raw, `expected ${what}`);
  return n;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration ("5s", "1m30s", "250ms", "2h") in milliseconds; a YAML number is nanoseconds, as in the reference. */
export function parseDurationMs(o: Origin, raw: unknown): number {
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw) || raw < 0) throw invalid(o, raw, 'expected a non-negative number of nanoseconds or a duration such as 5s');
    return raw / 1e6;
  }
  const s = asText(o, raw).trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let ms = 0;
  let i = 0;
  if (s === '') throw invalid(o, raw, 'expected a duration such as 5s, 250ms or 1h30m');
  while (i < s.length) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) throw invalid(o, raw, 'expected a duration such as 5s, 250ms or 1h30m (units ns, us, ms, s, m, h)');
    ms += Number(m[1]) * UNIT_MS[m[2]];
    i = re.lastIndex;
  }
  return ms;
}

/** A comma-separated list (or a YAML list) of non-empty strings. */
export function parseList(o: Origin, raw: unknown): string[] {
  if (Array.isArray(raw)) {
    return raw.map((x) => {
      if (typeof x !== 'string' && typeof x !== 'number') throw invalid(o, raw, 'expected a list of strings');
      return String(x).trim();
    });
  }
  const s = asText(o, raw);
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** One of the allowed values. */
export function parseEnum<T extends string>(o: Origin, raw: unknown, allowed: readonly T[]): T {
  const s = asText(o, raw);
  if (!(allowed as readonly string[]).includes(s)) throw invalid(o, raw, `allowed values are ${allowed.map((v) => `"${v}"`).join(', ')}`);
  return s as T;
}

const EXPLICIT_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(\[[^\]]*\]|[^/:?#@]*)(?::(\d*))?/;

/** A server URL: http or https, a host, an explicit port, no path, query or credentials. */
export function parseServerUrl(o: Origin, text: string): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid(o, text, 'not a URL; expected e.g. http://127.0.0.1:2379');
  }
  if (u.protocol === 'unix:' || u.protocol === 'unixs:') {
    // A unix socket: the file named by host + path (the reference's reading); no port needed.
    if (u.host + u.pathname === '' || u.host + u.pathname === '/') throw invalid(o, text, 'a unix URL needs a socket path, e.g. unix://localhost:2379 or unix:///run/svc.sock');
    return u;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid(o, text, `URL scheme must be http, https, unix or unixs (got "${u.protocol.replace(/:$/, '')}")`);
  const m = EXPLICIT_AUTHORITY.exec(text.trim());
  if (!m || m[2] === undefined || m[2] === '') throw invalid(o, text, 'URL must have the form scheme://host:port (the port is required)');
  if (u.hostname === '') throw invalid(o, text, 'URL has an empty host');
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw invalid(o, text, 'URL port must be between 1 and 65535');
  if (u.pathname !== '/' && u.pathname !== '') throw invalid(o, text, `URL must not contain a path (got "${u.pathname}")`);
  if (u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '') throw invalid(o, text, 'URL must not contain a query, fragment or credentials');
  return u;
}

/** The text of a server URL as scheme://host:port (an explicit port is kept even when it is the scheme default). */
export function urlText(u: URL, original: string): string {
  if (u.protocol === 'unix:' || u.protocol === 'unixs:') return original.trim().replace(/\/$/, '');
  const m = EXPLICIT_AUTHORITY.exec(original.trim());
  const port = m?.[2] || u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.protocol}//${u.hostname}:${port}`;
}

/** A list of server URLs. */
export function parseUrls(o: Origin, raw: unknown): URL[] {
  return parseList(o, raw).map((t) => parseServerUrl(o, t));
}

/** "name=url,name=url" (a name may repeat for several URLs) -> name -> URLs. */
export function parseCluster(o: Origin, raw: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entry of parseList(o, raw)) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw invalid(o, raw, `entry "${entry}" must have the form <name>=<peer URL>`);
    const name = entry.slice(0, eq).trim();
    const urlRaw = entry.slice(eq + 1).trim();
    const u = parseServerUrl(o, urlRaw);
    const list = out.get(name) ?? [];
    list.push(urlText(u, urlRaw));
    out.set(name, list);
  }
  return out;
}

/** True for hosts a server may bind: an IP address or localhost. */
export function isBindableHost(hostname: string): boolean {
  const h = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (h === 'localhost') return true;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(h)) return h.split('.').every((p) => Number(p) <= 255);
  return h.includes(':') && /^[0-9a-fA-F:.]+$/.test(h);
}
