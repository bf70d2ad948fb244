// Lets a process on the host (a test, or an operator run in-process) resolve cluster names as a pod does: names
// under the cluster domain ("<pod>.<service>.<ns>.svc[.cluster.local]") are asked of the test node's CoreDNS;
// every other name goes to the system resolver as before. dns.lookup is what net, http and grpc-js call.
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';

/** Addresses of kube-apiserver's --service-cluster-ip-range (10.0.0.0/24). */
const serviceIpPrefix = '10.0.0.';

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
let resolver: dns.Resolver | undefined;

/** The fully qualified cluster name for a "*.svc" or "*.svc.cluster.local" name, else undefined. */
export function clusterName(hostname: string, domain = 'cluster.local'): string | undefined {
  const n = hostname.toLowerCase().replace(/\.$/, '');
  if (n.endsWith(`.svc.${domain}`)) return n;
  if (n.endsWith('.svc')) return `${n}.${domain}`;
  return undefined;
}

/** Makes dns.lookup of this process ask CoreDNS at dnsIp for cluster names. Idempotent (the newest address wins). */
export function installClusterDns(dnsIp: string): void {
  if (resolver) { resolver.setServers([dnsIp]); return; }
  resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([dnsIp]);
  const r = resolver;
  const original = dns.lookup.bind(dns) as (...a: unknown[]) => void;
  const patched = (hostname: string, options: unknown, callback?: LookupCb): void => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCb;
    const opts = typeof options === 'object' && options !== null ? options as dns.LookupOptions
      : typeof options === 'number' ? { family: options } : {};
    const name = typeof hostname === 'string' ? clusterName(hostname) : undefined;
    if (!name || opts.family === 6 || opts.family === 'IPv6') { original(hostname, options, callback); return; }
    r.resolve4(name, (err, addresses) => {
      if (err || addresses.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        e.code = 'ENOTFOUND';
        cb(e, '', 0);
      } else if (addresses.some((a) => a.startsWith(serviceIpPrefix))) {
        // a Service's ClusterIP: nothing routes it on the test node (no kube-proxy)
        const e: NodeJS.ErrnoException = new Error(`${hostname} is a Service ClusterIP (${addresses.join(', ')}), which the test node does not route: use a pod's name or the Service's EndpointSlice`);
        e.code = 'ENOTFOUND';
        cb(e, '', 0);
      } else if (opts.all) cb(null, addresses.map((address) => ({ address, family: 4 })));
      else cb(null, addresses[0], 4);
    });
  };
  (dns as { lookup: unknown }).lookup = patched;
  (dns.promises as { lookup: unknown }).lookup = (hostname: string, options?: dns.LookupOptions | number) =>
    new Promise((resolve, reject) => {
      patched(hostname, options ?? {}, (err, address, family) => {
        if (err) reject(err);
        else resolve(Array.isArray(address) ? address : { address, family });
      });
    });
  syncBuiltinESMExports();
}
