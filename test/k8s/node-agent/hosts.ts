// Name resolution for pods that run as local processes. The agent keeps a hosts file (SVC_HOSTS_FILE) of
// "ip name [name...]" lines: each pod's DNS names (<hostname>.<subdomain>.<ns>.svc[.cluster.local]) and each
// Service's names (<svc>.<ns>.svc[.cluster.local], pointing at its ready pods). Node processes resolve through it
// because the agent preloads hosts-hook.js (NODE_OPTIONS=--import=...), which wraps dns.lookup; a test process
// calls installHostsLookup(file) to do the same.
import dns from 'node:dns';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

/** Parses hosts-file text into name -> addresses (in file order). */
export function parseHosts(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [ip, ...names] = line.split(/\s+/);
    for (const n of names) {
      const key = normalize(n);
      const list = out.get(key) ?? [];
      if (!list.includes(ip)) list.push(ip);
      out.set(key, list);
    }
  }
  return out;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Writes entries (name -> addresses) atomically as a hosts file. */
export function writeHosts(path: string, entries: Map<string, string[]>): void {
  const lines = ['# written by the svc test node agent: ip name'];
  for (const [name, ips] of [...entries].sort(([a], [b]) => a.localeCompare(b))) {
    for (const ip of ips) lines.push(`${ip} ${name}`);
  }
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, lines.join('\n') + '\n');
  renameSync(tmp, path);
}

/** Reads a hosts file on demand, re-reading it when it changes. */
export class HostsTable {
  private stamp = '';
  private table = new Map<string, string[]>();
  constructor(readonly path: string) {}

  /** Addresses for name, or undefined when the file does not list it. */
  resolve(name: string): string[] | undefined {
    try {
      const st = statSync(this.path);
      const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
      if (stamp !== this.stamp) {
        this.table = parseHosts(readFileSync(this.path, 'utf8'));
        this.stamp = stamp;
      }
    } catch {
      return undefined;
    }
    return this.table.get(normalize(name));
  }
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
let installed: HostsTable | undefined;

/** Makes dns.lookup (so net, http, grpc-js...) of this process consult the hosts file first. Idempotent. */
export function installHostsLookup(path: string): void {
  if (installed) { (installed as { path: string }).path = path; return; }
  installed = new HostsTable(path);
  const table = installed;
  const original = dns.lookup.bind(dns) as (...a: unknown[]) => void;
  const patched = (hostname: string, options: unknown, callback?: LookupCb): void => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCb;
    const opts = typeof options === 'object' && options !== null ? options as dns.LookupOptions
      : typeof options === 'number' ? { family: options } : {};
    const ips = typeof hostname === 'string' ? table.resolve(hostname) : undefined;
    if (!ips) { original(hostname, options, callback); return; }
    const family = opts.family === 'IPv6' || opts.family === 6 ? 6 : opts.family === 'IPv4' || opts.family === 4 ? 4 : 0;
    const list = ips.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 })).filter((a) => family === 0 || a.family === family);
    process.nextTick(() => {
      if (list.length === 0) {
        const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        err.code = 'ENOTFOUND';
        cb(err, '', 0);
      } else if (opts.all) cb(null, list);
      else cb(null, list[0].address, list[0].family);
    });
  };
  (dns as { lookup: unknown }).lookup = patched;
  const promises = dns.promises as { lookup: unknown };
  promises.lookup = (hostname: string, options?: dns.LookupOptions | number) =>
    new Promise((resolve, reject) => {
      patched(hostname, options ?? {}, (err, address, family) => {
        if (err) reject(err);
        else resolve(Array.isArray(address) ? address : { address, family });
      });
    });
  syncBuiltinESMExports();
}
