// How a pod's container becomes a local process. Mapping of images and commands (documented contract):
// - The image's tag "v<x.y.z>" of an image named svc (svc:v3.4.34, <registry>/<repo>/svc:v3.4.34) sets SVC_VERSION=x.y.z.
// - The svc image's entrypoint is "svc": a container without `command` runs svc with its `args`.
// - Command "svc", "/usr/local/bin/svc", "/usr/bin/svc", "/bin/svc" (and the same for svcctl and svc-operator) runs
//   `node <repo>/bin/svc` (`node <repo>/bin/svcctl`, ...); "node" or ".../bin/node" runs this Node; anything else runs as is.
// - $(VAR) references in command, args and env values are expanded as the kubelet does ($$ escapes).
// - Strings in command, args and env values that contain a volume's mountPath (followed by "/" or the end) get the
//   host folder instead; "0.0.0.0" becomes the pod's own IP (every pod shares the host, so a wildcard bind would take
//   the port on every pod address).
// - Mount paths under /var/run/secrets (the service-account token that in-cluster clients read from a fixed path)
//   cannot be served by substitution: such a container runs in a private mount namespace (unshare) where a tmpfs
//   covers /var/run/secrets and the volume folders are bind-mounted at their mount paths.
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { join } from 'node:path';

/** Resolves a key of a ConfigMap or Secret (decoded), or the whole object's data when key is undefined. */
export type RefResolver = (kind: 'ConfigMap' | 'Secret', namespace: string, name: string) => Promise<Record<string, string> | undefined>;

/** What the agent needs to turn a container into a process. */
export interface PlanContext {
  repoRoot: string;
  podIP: string;
  nodeName: string;
  /** mountPath -> host folder, for this container. */
  mounts: Map<string, string>;
  /** Environment every process gets first (PATH, SVC_HOSTS_FILE, NODE_OPTIONS ...). */
  baseEnv: Record<string, string>;
  resolveRef: RefResolver;
}

/** A container as a process. */
export interface ProcessPlan {
  argv: string[];
  env: Record<string, string>;
  cwd?: string;
  svcVersion?: string;
  /** mountPath -> host folder bind-mounted in the container's private mount namespace (argv is already wrapped). */
  privateMounts?: Map<string, string>;
}

/** Mount paths under here are bind-mounted (in a private mount namespace) instead of substituted in strings. */
export const PRIVATE_MOUNT_ROOT = '/var/run/secrets';

/** True for a mount path that string substitution cannot serve: a client reads it from a fixed path. */
export function needsPrivateMount(mountPath: string): boolean {
  const p = mountPath.replace(/\/+$/, '').replace(/^\/run\//, '/var/run/');
  return p === PRIVATE_MOUNT_ROOT || p.startsWith(`${PRIVATE_MOUNT_ROOT}/`);
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * argv that runs `argv` in a private mount namespace with a tmpfs on /var/run/secrets and each folder bind-mounted
 * (read-only, as the kubelet mounts service-account tokens) at its mount path; the shell execs, so the pid stays.
 */
export function withPrivateMounts(argv: string[], mounts: Map<string, string>): string[] {
  const lines = ['set -e', `mkdir -p ${PRIVATE_MOUNT_ROOT}`, `mount -t tmpfs -o mode=0755 svc-test-secrets ${PRIVATE_MOUNT_ROOT}`];
  for (const [mountPath, hostDir] of [...mounts].sort(([a], [b]) => a.length - b.length)) {
    lines.push(`mkdir -p ${shellQuote(mountPath)}`, `mount --bind ${shellQuote(hostDir)} ${shellQuote(mountPath)}`,
      `mount -o remount,bind,ro ${shellQuote(mountPath)}`);
  }
  lines.push('exec "$@"');
  // as root a mount namespace suffices; another user needs a user namespace (mapped to root) to mount in it
  const userns = process.getuid?.() === 0 ? [] : ['--user', '--map-root-user'];
  return ['unshare', ...userns, '--mount', '--propagation', 'private', '/bin/sh', '-c', lines.join('\n'), 'sh', ...argv];
}

/** Error for a container the agent cannot run. */
export class PlanError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

/** Splits an image reference into its name (last path element) and tag. */
export function parseImage(image: string): { name: string; tag?: string } {
  const noDigest = image.split('@')[0];
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  const hasTag = colon > slash;
  const path = hasTag ? noDigest.slice(0, colon) : noDigest;
  return { name: path.slice(path.lastIndexOf('/') + 1), tag: hasTag ? noDigest.slice(colon + 1) : undefined };
}

/** SVC_VERSION chosen by an svc image's tag (v3.4.34 -> 3.4.34), if any. */
export function svcVersionOf(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const { name, tag } = parseImage(image);
  const m = tag ? /^v?(\d+\.\d+\.\d+)$/.exec(tag) : null;
  return name === 'svc' && m ? m[1] : undefined;
}

/** Expands $(NAME) from env; $$(NAME) stays literal $(NAME); unknown names stay as written (kubelet rules). */
export function expandVars(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    return name !== undefined && Object.hasOwn(env, name) ? env[name] : m;
  });
}

/** Replaces mount paths (longest first) and the wildcard address in one string. */
export function rewriteHostPaths(s: string, mounts: Map<string, string>, podIP: string): string {
  let out = s;
  for (const [mountPath, hostDir] of [...mounts].sort(([a], [b]) => b.length - a.length)) {
    const mp = mountPath.replace(/\/+$/, '');
    if (!mp) continue;
    const re = new RegExp(`${mp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/|$|[\\s,;:"'=])`, 'g');
    out = out.replace(re, hostDir);
  }
  return out.replace(/\b0\.0\.0\.0\b/g, podIP);
}

/** Value of a downward-API field path for a pod. */
export function fieldValue(pod: V1Pod, fieldPath: string, podIP: string, nodeName: string): string {
  const meta = pod.metadata ?? {};
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (m[1] === 'labels' ? meta.labels : meta.annotations)?.[m[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name': return meta.name ?? '';
    case 'metadata.namespace': return meta.namespace ?? 'default';
    case 'metadata.uid': return meta.uid ?? '';
    case 'spec.nodeName': return nodeName;
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP': case 'status.podIPs': return podIP;
    case 'status.hostIP': case 'status.hostIPs': return '127.0.0.1';
    default: throw new PlanError('UNSUPPORTED_FIELD', `fieldRef ${fieldPath} is not supported by the test node agent`);
  }
}

async function envValue(pod: V1Pod, e: V1EnvVar, env: Record<string, string>, ctx: PlanContext): Promise<string | undefined> {
  if (!e.valueFrom) return expandVars(e.value ?? '', env);
  const ns = pod.metadata?.namespace ?? 'default';
  const vf = e.valueFrom;
  if (vf.fieldRef) return fieldValue(pod, vf.fieldRef.fieldPath, ctx.podIP, ctx.nodeName);
  const ref = vf.configMapKeyRef ?? vf.secretKeyRef;
  if (ref) {
    const data = await ctx.resolveRef(vf.configMapKeyRef ? 'ConfigMap' : 'Secret', ns, ref.name ?? '');
    const v = data?.[ref.key];
    if (v === undefined && !ref.optional) throw new PlanError('MISSING_REF', `env ${e.name}: ${ref.name}/${ref.key} not found`);
    return v;
  }
  if (vf.resourceFieldRef) return '0';
  return undefined;
}

function mapExecutable(argv0: string, repoRoot: string): string[] {
  const base = argv0.slice(argv0.lastIndexOf('/') + 1);
  const inBin = argv0 === base || /^\/(usr\/local\/|usr\/)?bin\//.test(argv0);
  if (inBin && (base === 'svc' || base === 'svcctl' || base === 'svc-operator')) return [process.execPath, join(repoRoot, 'bin', base)];
  if (inBin && base === 'node') return [process.execPath];
  return [argv0];
}

/** Turns a container of a pod into argv, env and cwd for a local process. */
export async function planContainer(pod: V1Pod, c: V1Container, ctx: PlanContext): Promise<ProcessPlan> {
  const svcVersion = svcVersionOf(c.image);
  const env: Record<string, string> = { ...ctx.baseEnv };
  if (svcVersion) env.SVC_VERSION = svcVersion;
  const ns = pod.metadata?.namespace ?? 'default';
  for (const src of c.envFrom ?? []) {
    const ref = src.configMapRef ?? src.secretRef;
    if (!ref?.name) continue;
    const data = await ctx.resolveRef(src.configMapRef ? 'ConfigMap' : 'Secret', ns, ref.name);
    if (!data && !ref.optional) throw new PlanError('MISSING_REF', `envFrom ${ref.name} not found`);
    for (const [k, v] of Object.entries(data ?? {})) env[(src.prefix ?? '') + k] = v;
  }
  for (const e of c.env ?? []) {
    const v = await envValue(pod, e, env, ctx);
    if (v !== undefined) env[e.name] = v;
  }
  const entry = c.command && c.command.length > 0 ? c.command : svcVersionOf(c.image) || parseImage(c.image ?? '').name === 'svc' ? ['svc'] : undefined;
  if (!entry) throw new PlanError('NO_COMMAND', `container ${c.name}: no command, and the image ${c.image ?? '?'} has no known entrypoint`);
  const privateMounts = new Map([...ctx.mounts].filter(([mp]) => needsPrivateMount(mp)));
  const mounts = new Map([...ctx.mounts].filter(([mp]) => !needsPrivateMount(mp)));
  const words = [...entry, ...(c.args ?? [])].map((w) => rewriteHostPaths(expandVars(w, env), mounts, ctx.podIP));
  for (const k of Object.keys(env)) {
    if (k in ctx.baseEnv && env[k] === ctx.baseEnv[k]) continue;
    env[k] = rewriteHostPaths(env[k], mounts, ctx.podIP);
  }
  const command = [...mapExecutable(words[0], ctx.repoRoot), ...words.slice(1)];
  const argv = privateMounts.size > 0 ? withPrivateMounts(command, privateMounts) : command;
  const cwd = c.workingDir ? rewriteHostPaths(c.workingDir, mounts, ctx.podIP) : undefined;
  return { argv, env, cwd, svcVersion, privateMounts: privateMounts.size > 0 ? privateMounts : undefined };
}
