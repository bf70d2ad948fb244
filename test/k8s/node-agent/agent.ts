// The test node agent: registers one Node (Ready, with capacity), binds pending pods to it (no kube-scheduler),
// provisions a PersistentVolume for each pending claim, and runs each bound pod's containers as local processes
// (see pod-runner.ts), each pod with its own loopback address 127.0.B.N reported as status.podIP. Pod and Service
// names resolve through a hosts file that it keeps (hosts.ts).
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1Service } from '@kubernetes/client-node';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Cache, KubeClient, STRATEGIC_MERGE_PATCH, type KubeObject } from '../kube-client.js';
import { writeHosts } from './hosts.js';
import { PodRunner, type PodHost } from './pod-runner.js';
import { claimsBound, materializeVolumes, volumeForClaim } from './volumes.js';

/** Options of startNodeAgent. */
export interface NodeAgentOptions {
  kubeconfigPath: string;
  /** Folder for pod folders, PV folders (<workDir>/pv/<pv>), the hosts file and logs. */
  workDir: string;
  /** Repository root whose bin/svc runs for svc containers. */
  repoRoot: string;
  nodeName?: string;
  /** Container logs (default <workDir>/logs). */
  logDir?: string;
  /**
   * Third octet of pod addresses: 127.0.<octet>.N. Default: chosen at random in 1..200 per agent, so that two
   * testbeds on one machine (developers share it) rarely hand out the same addresses.
   */
  ipOctet?: number;
}

const isGone = (e: unknown): boolean => (e as { code?: number }).code === 404;
const isConflict = (e: unknown): boolean => (e as { code?: number }).code === 409;
const podPath = (ns: string, name: string): string => `/api/v1/namespaces/${ns}/pods/${name}`;

/** A running node agent. */
export class NodeAgent {
  readonly nodeName: string;
  /** The hosts file (SVC_HOSTS_FILE) of pod and service names. */
  readonly hostsFile: string;
  readonly logDir: string;
  private readonly api: KubeClient;
  private readonly pods: Cache<V1Pod & KubeObject>;
  private readonly claims: Cache<V1PersistentVolumeClaim & KubeObject>;
  private readonly volumes: Cache<V1PersistentVolume & KubeObject>;
  private readonly services: Cache<V1Service & KubeObject>;
  private readonly runners = new Map<string, PodRunner>();
  private readonly finishing = new Set<string>();
  private readonly asked = new Set<string>();
  private readonly ips = new Map<string, string>();
  private nextIp = 1;
  private readonly ipOctet: number;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private kicked = false;
  private loop: Promise<void> | undefined;
  private lastHosts = '';
  private stopped = false;
  /** when the node became Ready (its conditions never change after that) */
  private readonly since = new Date().toISOString();

  constructor(readonly opts: NodeAgentOptions) {
    this.nodeName = opts.nodeName ?? 'svc-test-node';
    this.logDir = opts.logDir ?? join(opts.workDir, 'logs');
    this.hostsFile = join(opts.workDir, 'hosts');
    this.ipOctet = opts.ipOctet ?? 1 + Math.floor(Math.random() * 200);
    mkdirSync(this.logDir, { recursive: true });
    mkdirSync(join(opts.workDir, 'pv'), { recursive: true });
    writeHosts(this.hostsFile, new Map());
    this.api = KubeClient.fromKubeconfig(opts.kubeconfigPath);
    const kick = (): void => this.kick();
    const onError = (e: unknown): void => this.log(`watch: ${String(e)}`);
    this.pods = new Cache(this.api, '/api/v1/pods', kick, onError);
    this.claims = new Cache(this.api, '/api/v1/persistentvolumeclaims', kick, onError);
    this.volumes = new Cache(this.api, '/api/v1/persistentvolumes', kick, onError);
    this.services = new Cache(this.api, '/api/v1/services', kick, onError);
  }

  /** Address of a pod run here, if any. */
  podIP(namespace: string, name: string): string | undefined {
    for (const r of this.runners.values()) if (r.namespace === namespace && r.name === name) return r.ip;
    return undefined;
  }

  private log(msg: string): void {
    appendFileSync(join(this.logDir, 'node-agent.log'), `${new Date().toISOString()} ${msg}\n`);
  }

  /** Registers the node, starts the watches and the reconcile loop. */
  async start(): Promise<void> {
    await this.registerNode();
    this.heartbeat = setInterval(() => void this.patchNodeStatus().catch((e: unknown) => this.log(`heartbeat: ${String(e)}`)), 10_000);
    for (const cache of [this.pods, this.claims, this.volumes, this.services]) await cache.start();
    this.timer = setInterval(() => this.kick(), 1000);
    this.kick();
  }

  /** Stops every pod process (SIGTERM then SIGKILL after graceSeconds) and the watches; the Node object stays. */
  async stop(graceSeconds = 5): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    await Promise.all([...this.runners.values()].map((r) => r.terminate(graceSeconds)));
    await this.loop;
    for (const cache of [this.pods, this.claims, this.volumes, this.services]) await cache.stop();
    this.api.close();
  }

  private nodeStatus(): object {
    const t = new Date().toISOString();
    const cond = (type: string, status: string, reason: string): object =>
      ({ type, status, reason, message: reason, lastHeartbeatTime: t, lastTransitionTime: this.since });
    const resources = { cpu: '16', memory: '64Gi', pods: '250', 'ephemeral-storage': '100Gi' };
    return {
      capacity: resources, allocatable: resources,
      conditions: [
        cond('Ready', 'True', 'KubeletReady'), cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'), cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
      ],
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: this.nodeName }],
      nodeInfo: { machineID: 'svc-test', systemUUID: 'svc-test', bootID: 'svc-test', kernelVersion: '', osImage: 'svc test node agent',
        containerRuntimeVersion: 'svc-test://processes', kubeletVersion: 'v0.0.0-svc-test', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
    };
  }

  private async patchNodeStatus(): Promise<void> {
    await this.api.patch(`/api/v1/nodes/${this.nodeName}/status`, { status: this.nodeStatus() });
  }

  private async registerNode(): Promise<void> {
    try {
      await this.api.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: this.nodeName, labels: {
        'kubernetes.io/hostname': this.nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } } });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
    await this.patchNodeStatus();
  }

  private kick(): void {
    if (this.stopped) return;
    this.kicked = true;
    if (this.loop) return;
    this.loop = (async () => {
      while (this.kicked && !this.stopped) {
        this.kicked = false;
        try {
          await this.reconcile();
        } catch (e) {
          this.log(`reconcile: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
        }
      }
      this.loop = undefined;
    })();
  }

  private async reconcile(): Promise<void> {
    await this.provisionClaims();
    const seen = new Set<string>();
    for (const pod of this.pods.list()) {
      const uid = pod.metadata?.uid ?? '';
      seen.add(uid);
      await this.reconcilePod(pod, uid);
    }
    for (const [uid, r] of this.runners) {
      if (!seen.has(uid) && !this.finishing.has(uid)) {
        // deleted without us (force delete): stop at once
        this.runners.delete(uid);
        void r.terminate(0);
      }
    }
    this.writeHostsFile();
  }

  private async provisionClaims(): Promise<void> {
    for (const pvc of this.claims.list()) {
      const uid = pvc.metadata?.uid ?? '';
      if (pvc.spec?.volumeName || pvc.status?.phase !== 'Pending' || pvc.metadata?.deletionTimestamp || this.asked.has(`pv/${uid}`)) continue;
      this.asked.add(`pv/${uid}`);
      const pv = volumeForClaim(pvc, join(this.opts.workDir, 'pv'));
      try {
        await this.api.create('/api/v1/persistentvolumes', pv);
        this.log(`provisioned ${pv.metadata?.name} for ${pvc.metadata?.namespace}/${pvc.metadata?.name}`);
      } catch (e) {
        if (!isConflict(e)) { this.asked.delete(`pv/${uid}`); this.log(`provision ${pv.metadata?.name}: ${String(e)}`); }
      }
    }
  }

  private async reconcilePod(pod: V1Pod, uid: string): Promise<void> {
    const ns = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const spec = pod.spec ?? { containers: [] };
    if (!spec.nodeName) {
      const scheduler = spec.schedulerName ?? 'default-scheduler';
      if (scheduler !== 'default-scheduler' || pod.metadata?.deletionTimestamp || this.asked.has(`bind/${uid}`)) return;
      this.asked.add(`bind/${uid}`);
      try {
        await this.api.create(`${podPath(ns, name)}/binding`, { apiVersion: 'v1', kind: 'Binding',
          metadata: { name, namespace: ns, uid }, target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName } });
      } catch (e) {
        this.asked.delete(`bind/${uid}`);
        if (!isGone(e) && !isConflict(e)) this.log(`bind ${ns}/${name}: ${String(e)}`);
      }
      return;
    }
    if (spec.nodeName !== this.nodeName) return;
    const runner = this.runners.get(uid);
    if (runner) runner.update(pod);
    if (pod.metadata?.deletionTimestamp) {
      if (this.finishing.has(uid)) return;
      this.finishing.add(uid);
      void (async () => {
        try {
          await runner?.terminate();
          await this.api.delete(podPath(ns, name), { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } });
        } catch (e) {
          if (!isGone(e) && !isConflict(e)) {
            this.log(`finalize ${ns}/${name}: ${String(e)}`);
            await new Promise((r) => setTimeout(r, 1000));
          }
        } finally {
          this.runners.delete(uid);
          this.finishing.delete(uid);
          this.kick();
        }
      })();
      return;
    }
    if (runner || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    const ctx = this.volumeContext(pod, uid);
    if (!claimsBound(pod, ctx)) return;
    if (this.asked.has(`start/${uid}`)) return;
    this.asked.add(`start/${uid}`);
    try {
      const dirs = await materializeVolumes(pod, ctx);
      const r = new PodRunner(pod, ctx.podIP, dirs, ctx.podDir, this.podHost());
      this.runners.set(uid, r);
      this.log(`starting ${ns}/${name} on ${ctx.podIP}`);
      r.start();
    } catch (e) {
      this.log(`start ${ns}/${name}: ${String(e)}`);
      setTimeout(() => { this.asked.delete(`start/${uid}`); this.kick(); }, 1000);
    }
  }

  private ipFor(uid: string): string {
    let ip = this.ips.get(uid);
    if (!ip) {
      const n = this.nextIp++;
      ip = `127.0.${this.ipOctet + Math.floor((n - 1) / 254)}.${((n - 1) % 254) + 1}`;
      this.ips.set(uid, ip);
    }
    return ip;
  }

  private volumeContext(pod: V1Pod, uid: string): Parameters<typeof materializeVolumes>[1] {
    const ns = pod.metadata?.namespace ?? 'default';
    return {
      podDir: join(this.opts.workDir, 'pods', `${ns}_${pod.metadata?.name ?? ''}_${uid}`),
      workDir: this.opts.workDir, podIP: this.ipFor(uid), nodeName: this.nodeName,
      claim: (namespace, name) => this.claims.get(name, namespace),
      volume: (name) => this.volumes.get(name),
      resolveRef: (kind, namespace, name) => this.resolveRef(kind, namespace, name),
      serviceAccountToken: async (namespace, sa, audience, seconds) => (await this.api.create<{ status?: { token?: string } }>(
        `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: audience ? [audience] : [], expirationSeconds: seconds } })).status?.token ?? '',
    };
  }

  private async resolveRef(kind: 'ConfigMap' | 'Secret', namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      if (kind === 'ConfigMap') return (await this.api.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/configmaps/${name}`)).data ?? {};
      const s = await this.api.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
      return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    } catch (e) {
      if (isGone(e)) return undefined;
      throw e;
    }
  }

  private podHost(): PodHost {
    const hook = pathToFileURL(join(import.meta.dirname, 'hosts-hook.js')).href;
    // in-cluster clients find the apiserver through these (as the kubelet sets them); the kubernetes Service's
    // ClusterIP is not routed here, so they name the apiserver's own address
    const apiserver = new URL(this.api.conn.server);
    return {
      nodeName: this.nodeName, repoRoot: this.opts.repoRoot, logDir: this.logDir,
      baseEnv: (podDir, hostname) => ({
        PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: podDir, HOSTNAME: hostname,
        SVC_HOSTS_FILE: this.hostsFile, NODE_OPTIONS: `--import=${hook}`,
        KUBERNETES_SERVICE_HOST: apiserver.hostname, KUBERNETES_SERVICE_PORT: apiserver.port || '443',
      }),
      resolveRef: (kind, ns, name) => this.resolveRef(kind, ns, name),
      pushStatus: async (namespace, name, status) => {
        try {
          await this.api.patch(`${podPath(namespace, name)}/status`, { status }, STRATEGIC_MERGE_PATCH);
        } catch (e) {
          if (!isGone(e)) throw e;
        }
      },
      changed: () => this.kick(),
      log: (m) => this.log(m),
    };
  }

  /** Pod names (hostname.subdomain.ns.svc) and Service names (ready pods) -> pod addresses. */
  private writeHostsFile(): void {
    const entries = new Map<string, string[]>();
    const add = (names: string[], ip: string): void => {
      for (const n of names) {
        const list = entries.get(n) ?? [];
        if (!list.includes(ip)) list.push(ip);
        entries.set(n, list);
      }
    };
    const dns = (base: string, ns: string): string[] => [`${base}.${ns}.svc`, `${base}.${ns}.svc.cluster.local`];
    const live = [...this.runners.values()].filter((r) => !r.terminating);
    for (const r of live) {
      const sub = r.object.spec?.subdomain;
      if (sub) add(dns(`${r.hostname}.${sub}`, r.namespace), r.ip);
    }
    for (const svc of this.services.list()) {
      const sel = svc.spec?.selector;
      if (!sel || Object.keys(sel).length === 0) continue;
      const ns = svc.metadata?.namespace ?? 'default';
      for (const r of live) {
        const labels = r.object.metadata?.labels ?? {};
        if (r.namespace !== ns || !Object.entries(sel).every(([k, v]) => labels[k] === v)) continue;
        if (r.ready || svc.spec?.publishNotReadyAddresses) add(dns(svc.metadata?.name ?? '', ns), r.ip);
      }
    }
    const key = JSON.stringify([...entries].sort());
    if (key === this.lastHosts) return;
    this.lastHosts = key;
    writeHosts(this.hostsFile, entries);
  }
}

/** Creates and starts a node agent. */
export async function startNodeAgent(opts: NodeAgentOptions): Promise<NodeAgent> {
  const agent = new NodeAgent(opts);
  await agent.start();
  return agent;
}
