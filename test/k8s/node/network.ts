// The test node's pod network and the rules it must keep. Pods live in their own network namespaces on a Linux
// bridge that exists only on this machine; the host holds the bridge's address (so it can reach pods, and pods can
// reach CoreDNS and the API relay on it) and the `kubernetes` Service's ClusterIP (a relay to kube-apiserver listens
// there). Nothing routes: pods get no default route, nothing is masqueraded, and net.ipv4.ip_forward stays as found.
// The harness reads the host's network state before the node starts and checks it while pods run and after.
import { readFileSync } from 'node:fs';
import { HarnessError } from '../../../harness/errors.js';
import { runCommand } from '../../../harness/process.js';

/** Addresses of the test node's network. */
export const POD_NET = {
  bridge: 'svck8s0',
  subnet: '10.244.0.0/24',
  /** The host's address on the bridge: node IP, CoreDNS, the gateway of the one route pods get. */
  hostIp: '10.244.0.1',
  prefixLength: 24,
  /** kube-apiserver's --service-cluster-ip-range, and the `kubernetes` Service's ClusterIP in it. */
  serviceCidr: '10.0.0.0/24',
  apiServiceIp: '10.0.0.1',
} as const;

/**
 * Where the node's containerd sends every image pull, for every registry (a `_default` hosts.toml): a loopback port
 * with nothing listening. A pod naming an image that was not imported fails at once with ErrImagePull, and no pull
 * ever leaves the machine.
 */
export const REFUSING_REGISTRY = 'https://127.0.0.1:1';

/** What the node must leave exactly as it found. */
export interface HostNetState {
  ipForward: string;
  /** iptables-save and ip6tables-save of every table, without counters. */
  rules: string;
  /** The host's IPv4 routes, without the bridge's own. */
  routes: string;
  /** Network interfaces other than the bridge and its veths. */
  links: string;
}

async function out(argv: string[]): Promise<string> {
  return (await runCommand(argv, { timeoutMs: 30_000 })).stdout;
}

async function tryOut(argv: string[]): Promise<string> {
  try { return await out(argv); } catch (e) { return `(${argv[0]} failed: ${(e as Error).message})`; }
}

function stripCounters(save: string): string {
  return save.split('\n').filter((l) => !l.startsWith('#')).map((l) => l.replace(/\[\d+:\d+\]/g, '')).join('\n');
}

/** Reads the host's forwarding switch, packet-filter rules, routes and interfaces. */
export async function readHostNet(): Promise<HostNetState> {
  const links = (await out(['ip', '-o', 'link', 'show'])).split('\n')
    .map((l) => /^\d+:\s+([^:@]+)/.exec(l)?.[1] ?? '')
    .filter((n) => n && n !== POD_NET.bridge && !n.startsWith('veth')).sort().join(' ');
  return {
    ipForward: readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(),
    rules: stripCounters(await tryOut(['iptables-save'])) + stripCounters(await tryOut(['ip6tables-save'])),
    routes: (await out(['ip', '-4', 'route', 'show', 'table', 'all'])).split('\n')
      .filter((l) => l && !l.includes(`dev ${POD_NET.bridge}`)).sort().join('\n'),
    links,
  };
}

/** Throws naming every difference between two readings (the rules of the test node's network). */
export function assertHostNetUnchanged(before: HostNetState, now: HostNetState, when: string): void {
  const broken: string[] = [];
  if (now.ipForward !== before.ipForward) broken.push(`net.ipv4.ip_forward is ${now.ipForward}, was ${before.ipForward}`);
  if (now.rules !== before.rules) broken.push(`packet-filter rules changed:\n--- before\n${before.rules}\n--- now\n${now.rules}`);
  if (now.routes !== before.routes) broken.push(`host routes changed:\n--- before\n${before.routes}\n--- now\n${now.routes}`);
  if (now.links !== before.links) broken.push(`network interfaces changed: before [${before.links}], now [${now.links}]`);
  if (broken.length) throw new HarnessError('NETWORK_RULE', `${when}: ${broken.join('; ')}`);
}

/** Network namespaces of pods (containerd names them cni-<uuid>). */
export async function podNetnsNames(): Promise<string[]> {
  return (await out(['ip', 'netns', 'list'])).split('\n').map((l) => l.split(' ')[0]).filter((n) => n.startsWith('cni-'));
}

/** Throws unless the pod's namespace has only the bridge subnet and the one route to the API relay. */
export async function assertPodRoutes(netns: string): Promise<void> {
  const routes = (await out(['ip', '-n', netns, '-4', 'route', 'show', 'table', 'all'])).split('\n').filter(Boolean);
  const allowed = (r: string): boolean =>
    r.startsWith(`${POD_NET.subnet} dev eth0`) || r.startsWith(`${POD_NET.apiServiceIp} via ${POD_NET.hostIp} dev eth0`) ||
    r.startsWith('local ') || r.startsWith('broadcast ') || r.includes(' dev lo ');
  const bad = routes.filter((r) => !allowed(r));
  if (bad.length) throw new HarnessError('NETWORK_RULE', `pod namespace ${netns} has routes it must not have: ${bad.join('; ')}`);
  const v6 = (await out(['ip', '-n', netns, '-6', 'route', 'show', 'default'])).trim();
  if (v6) throw new HarnessError('NETWORK_RULE', `pod namespace ${netns} has an IPv6 default route: ${v6}`);
}

/** Creates the bridge with the host's two addresses (removing one an aborted run left). */
export async function createBridge(): Promise<void> {
  await deleteBridge();
  const ip = (...a: string[]): Promise<string> => out(['ip', ...a]);
  await ip('link', 'add', POD_NET.bridge, 'type', 'bridge');
  // no IPv6 on the bridge: pods must not get router advertisements or link-local routes from the host
  await runCommand(['sysctl', '-q', '-w', `net.ipv6.conf.${POD_NET.bridge}.disable_ipv6=1`]).catch(() => undefined);
  await ip('addr', 'add', `${POD_NET.hostIp}/${POD_NET.prefixLength}`, 'dev', POD_NET.bridge);
  await ip('addr', 'add', `${POD_NET.apiServiceIp}/32`, 'dev', POD_NET.bridge);
  await ip('link', 'set', POD_NET.bridge, 'up');
  // Service ClusterIPs are not routed (no kube-proxy); this keeps a stray connection to one on the bridge, where it
  // fails, instead of following the host's default route off the machine
  await ip('route', 'add', POD_NET.serviceCidr, 'dev', POD_NET.bridge);
}

/** Deletes the bridge (its veths go with their namespaces) and any pod namespace left behind. */
export async function deleteBridge(): Promise<void> {
  for (const ns of await podNetnsNames()) await runCommand(['ip', 'netns', 'delete', ns]).catch(() => undefined);
  const links = await out(['ip', '-o', 'link', 'show']);
  if (links.includes(`: ${POD_NET.bridge}:`)) await out(['ip', 'link', 'delete', POD_NET.bridge]);
}
