// A real Kubernetes node on this machine, beside the control plane of control-plane.ts: containerd (Debian's, with
// runc and the CNI bridge plugin) under its own config, root and socket; kubelet and kube-scheduler from the same
// pinned Kubernetes build; CoreDNS answering the cluster domain on the bridge address; rancher's
// local-path-provisioner behind a default StorageClass; and a relay from the `kubernetes` Service's ClusterIP to
// kube-apiserver. Everything it creates lives under <workDir>/node or is removed by stop(): processes, mounts,
// network namespaces, the bridge, cgroups. See network.ts for the network rules, which it checks.
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { binary } from '../binaries.js';
import type { ControlPlane } from '../control-plane.js';
import { writeKubeconfig } from '../control-plane.js';
import { HarnessError } from '../../../harness/errors.js';
import { type LoggedProcess, runCommand, spawnLogged, waitFor } from '../../../harness/process.js';
import { freePort } from '../../../harness/ports.js';
import { POD_NET, REFUSING_REGISTRY, assertHostNetUnchanged, assertPodRoutes, createBridge, deleteBridge, podNetnsNames, readHostNet, type HostNetState } from './network.js';
import type { NodeImages } from './images.js';

/** Name of the one node. */
export const NODE_NAME = 'svc-test-node';
/** Where containerd keeps its runtime state; short, because shim sockets live under it. */
const STATE_DIR = '/run/svc-test-node';

export interface NodeOptions {
  workDir: string;
  controlPlane: ControlPlane;
  binDir: string;
  images: NodeImages;
  /** Runs the image build/import (gets the containerd socket) once containerd is up. */
  importImages: (containerdSocket: string) => Promise<void>;
}

/** A running node. */
export interface Node {
  readonly name: string;
  readonly containerdSocket: string;
  /** Address of CoreDNS (port 53) on the bridge. */
  readonly dnsIp: string;
  readonly logDir: string;
  /** The host's network state read before the node started. */
  readonly hostNetBefore: HostNetState;
  /** SIGKILLs a container ("containerd://<id>" as pod status gives it): a crash, which the kubelet then sees. */
  killContainer(containerID: string): Promise<void>;
  /** Checks the network rules now (every pod's routes and the host's state); throws on a breach. */
  checkNetwork(when: string): Promise<void>;
  /** Deletes every pod, stops everything, removes what the node made and checks the rules once more. */
  stop(): Promise<void>;
}

function containerdConfig(dir: string, sandboxImage: string, cniConfDir: string, registryHostsDir: string): string {
  return `version = 2
root = "${join(dir, 'root')}"
state = "${STATE_DIR}/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${STATE_DIR}/containerd.sock"
[ttrpc]
  address = "${STATE_DIR}/containerd.sock.ttrpc"
[debug]
  level = "warn"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${sandboxImage}"
  # root here lacks CAP_SYS_RESOURCE: without this every sandbox fails ("can't get final child's PID from pipe: EOF")
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConfDir}"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${registryHostsDir}"
`;
}

/**
 * hosts.toml of the `_default` folder (the one containerd uses for a registry without a folder of its own): the
 * refusing endpoint as the only host and as the server, so no registry's own address is ever tried (an empty
 * `server` would fall back to it).
 */
function refusingRegistryHosts(): string {
  return `server = "${REFUSING_REGISTRY}"
[host."${REFUSING_REGISTRY}"]
  capabilities = ["pull", "resolve"]
`;
}

function cniConfig(ipamDir: string): string {
  return JSON.stringify({
    cniVersion: '0.4.0', name: 'svc-test-pods',
    plugins: [{
      type: 'bridge', bridge: POD_NET.bridge,
      // isGateway would set ip_forward=1 on every pod start; ipMasq would add NAT rules
      isGateway: false, isDefaultGateway: false, ipMasq: false, hairpinMode: false,
      ipam: {
        type: 'host-local', dataDir: ipamDir,
        ranges: [[{ subnet: POD_NET.subnet, rangeStart: '10.244.0.10', gateway: POD_NET.hostIp }]],
        // the only route a pod gets: to the API relay on the host (no default route)
        routes: [{ dst: `${POD_NET.apiServiceIp}/32`, gw: POD_NET.hostIp }],
      },
    }],
  }, null, 2);
}

function kubeletConfig(o: { caFile: string; resolvConf: string; socket: string; healthzPort: number; port: number }): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${POD_NET.hostIp}
port: ${o.port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${o.healthzPort}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${o.caFile}}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${o.socket}
# the host has cgroup v1
cgroupDriver: cgroupfs
failCgroupV1: false
# the kubelet's own chains include a DROP for 127/8 traffic; the node needs no iptables at all
makeIPTablesUtilChains: false
clusterDomain: cluster.local
clusterDNS: [${POD_NET.hostIp}]
# pods must not get the host's resolvers: only CoreDNS
resolvConf: ${o.resolvConf}
failSwapOn: false
# test images are imported, never pulled: keep them whatever the disk's fill
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
serializeImagePulls: false
syncFrequency: 10s
fileCheckFrequency: 0s
nodeStatusUpdateFrequency: 5s
shutdownGracePeriod: 0s
registerNode: true
`;
}

function corefile(kubeconfig: string, healthPort: number, readyPort: number): string {
  return `cluster.local:53 {
    bind ${POD_NET.hostIp}
    errors
    health 127.0.0.1:${healthPort}
    ready 127.0.0.1:${readyPort}
    kubernetes cluster.local {
        kubeconfig ${kubeconfig} svc-test
        pods insecure
    }
}
`;
}

const PROVISIONER_NS = 'local-path-storage';

function provisionerManifests(pvDir: string, helperImage: string): string {
  const helperPod = `apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  containers:
  - name: helper-pod
    image: ${helperImage}
    imagePullPolicy: Never
    securityContext: {runAsUser: 65532, runAsGroup: 65532}
`;
  const cm = {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'local-path-config', namespace: PROVISIONER_NS },
    data: {
      'config.json': JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [pvDir] }] }),
      setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
      teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
      'helperPod.yaml': helperPod,
    },
  };
  const sc = {
    apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass',
    metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'rancher.io/local-path', volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete',
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROVISIONER_NS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'local-path-provisioner', namespace: PROVISIONER_NS } },
    cm, sc,
  ].map((o) => JSON.stringify(o)).join('\n---\n');
}

/** Relays TCP from the `kubernetes` Service's ClusterIP:443 to kube-apiserver (in-cluster clients use it). */
async function startApiRelay(apiPort: number): Promise<{ close(): Promise<void> }> {
  const open = new Set<Socket>();
  const srv = createServer((inbound) => {
    const upstream = createConnection({ host: '127.0.0.1', port: apiPort });
    open.add(inbound).add(upstream);
    inbound.pipe(upstream).pipe(inbound);
    const close = (): void => { inbound.destroy(); upstream.destroy(); open.delete(inbound); open.delete(upstream); };
    for (const s of [inbound, upstream]) { s.on('error', close); s.on('close', close); }
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(443, POD_NET.apiServiceIp, () => resolve());
  });
  return {
    close: () => new Promise<void>((resolve) => {
      srv.close(() => resolve());
      for (const s of open) s.destroy(); // watches would keep close() waiting
    }),
  };
}

/** Status of a GET to a component's self-signed https endpoint (0 when it does not answer). */
function insecureStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Unmounts everything mounted under dir (deepest first). */
async function unmountUnder(dir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + '/'))).sort((a, b) => b.length - a.length);
  for (const m of mounts) await runCommand(['umount', '-l', m]).catch(() => undefined);
}

/** SIGKILLs containerd shims (and so containers) whose command line names our containerd socket. */
function killShims(): void {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes('containerd-shim') && cmd.includes(STATE_DIR)) process.kill(Number(entry), 'SIGKILL');
    } catch { /* gone */ }
  }
}

/** SIGKILLs every process left in the kubelet's cgroups, then removes the cgroups (kubepods...) of every v1 hierarchy. */
function removeCgroups(): void {
  const base = '/sys/fs/cgroup';
  if (!existsSync(base)) return;
  const killIn = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) killIn(join(dir, e.name));
    try {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ }
      }
    } catch { /* no such file */ }
  };
  const pids = join(base, 'pids', 'kubepods');
  if (existsSync(pids)) killIn(pids);
  const rmTree = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmTree(join(dir, e.name));
    try { rmdirSync(dir); } catch { /* busy: leave it */ }
  };
  for (const h of readdirSync(base)) {
    const dir = join(base, h, 'kubepods');
    if (existsSync(dir)) { try { rmTree(dir); } catch { /* leave it */ } }
  }
}

/** Removes whatever an aborted run left: shims, mounts under the node folder and the state folder, the bridge. */
export async function cleanNodeLeftovers(nodeDir: string): Promise<void> {
  killShims();
  await unmountUnder(STATE_DIR);
  await unmountUnder(nodeDir);
  await deleteBridge();
  rmSync(STATE_DIR, { recursive: true, force: true });
  removeCgroups();
}

/** Starts containerd, imports the images, then kubelet, kube-scheduler, CoreDNS and the provisioner. */
export async function startNode(opts: NodeOptions): Promise<Node> {
  const cp = opts.controlPlane;
  const dir = join(opts.workDir, 'node');
  const logDir = cp.logDir;
  await cleanNodeLeftovers(dir);
  const hostNetBefore = await readHostNet();
  mkdirSync(dir, { recursive: true });
  mkdirSync(STATE_DIR, { recursive: true });
  const started: LoggedProcess[] = [];
  let relay: { close(): Promise<void> } | undefined;
  const t0 = Date.now();
  // what the node does, with the time, in <logs>/node.log (start and stop are where a run gets stuck)
  const step = (what: string): void => appendFileSync(join(logDir, 'node.log'), `${new Date().toISOString()} +${((Date.now() - t0) / 1000).toFixed(1)}s ${what}\n`);
  const bin = (n: Parameters<typeof binary>[0]): string => binary(n, opts.binDir);
  const stopProcesses = async (): Promise<void> => {
    // everything but containerd, then the containers it still runs, then containerd
    for (const p of [...started].reverse()) {
      if (p.name === 'containerd') continue;
      await p.stop('SIGTERM', 5000);
      step(`stopped ${p.name}`);
    }
    const containerd = started.find((p) => p.name === 'containerd');
    if (containerd?.exitStatus() === null) await killTasks(`${STATE_DIR}/containerd.sock`);
    step('killed the remaining container tasks');
    await containerd?.stop('SIGTERM', 5000);
    step('stopped containerd');
    started.length = 0;
  };
  const teardown = async (): Promise<void> => {
    await stopProcesses();
    await relay?.close();
    step('closed the API relay');
    await cleanNodeLeftovers(dir);
    // the unpacked images and pod folders (hundreds of MB) go too: each start imports afresh; logs stay in <work>/logs
    try { rmSync(dir, { recursive: true, force: true }); } catch (e) { step(`could not remove ${dir}: ${String(e)}`); }
    step('removed mounts, pod namespaces, the bridge, cgroups and the node folder');
  };
  try {
    step('starting: bridge, API relay, containerd');
    await createBridge();
    relay = await startApiRelay(Number(new URL(cp.server).port));

    // containerd
    const cniConfDir = join(dir, 'cni', 'net.d');
    mkdirSync(cniConfDir, { recursive: true });
    writeFileSync(join(cniConfDir, '10-svc-test-pods.conflist'), cniConfig(join(dir, 'cni', 'ipam')));
    const cdDir = join(dir, 'containerd');
    mkdirSync(cdDir, { recursive: true });
    const registryHostsDir = join(cdDir, 'certs.d');
    mkdirSync(join(registryHostsDir, '_default'), { recursive: true });
    writeFileSync(join(registryHostsDir, '_default', 'hosts.toml'), refusingRegistryHosts());
    writeFileSync(join(cdDir, 'config.toml'), containerdConfig(cdDir, opts.images.pause, cniConfDir, registryHostsDir));
    const socket = `${STATE_DIR}/containerd.sock`;
    const containerd = spawnLogged('containerd', ['--config', join(cdDir, 'config.toml')], { logFile: join(logDir, 'containerd.log') });
    started.push(containerd);
    await waitFor('containerd', async () => {
      if (containerd.exitStatus()) throw new HarnessError('PROCESS_EXITED', `containerd exited: see ${join(logDir, 'containerd.log')}`);
      return (await runCommand(['ctr', '--address', socket, 'version'], { timeoutMs: 5000 }).then(() => true).catch(() => undefined));
    }, 60_000);
    step('containerd up');
    await opts.importImages(socket);
    step('images imported');

    // credentials of the node's components
    const pki = cp.pki;
    const kubeconfigFor = (name: string, cert: string, key: string): string => {
      const p = join(dir, `${name}.kubeconfig`);
      writeKubeconfig(p, cp.server, pki.caCert, { certFile: cert, keyFile: key });
      return p;
    };
    const kubeletKc = kubeconfigFor('kubelet', pki.kubeletCert, pki.kubeletKey);
    const schedulerKc = kubeconfigFor('kube-scheduler', pki.schedulerCert, pki.schedulerKey);
    const adminKc = cp.kubeconfigPath;

    // kubelet
    const resolvConf = join(dir, 'resolv.conf');
    writeFileSync(resolvConf, `nameserver ${POD_NET.hostIp}\n`);
    const kubeletDir = join(dir, 'kubelet');
    mkdirSync(kubeletDir, { recursive: true });
    const healthzPort = await freePort();
    writeFileSync(join(dir, 'kubelet.yaml'), kubeletConfig({ caFile: pki.caCert, resolvConf, socket, healthzPort, port: await freePort(POD_NET.hostIp) }));
    const kubelet = spawnLogged(bin('kubelet'), [`--config=${join(dir, 'kubelet.yaml')}`, `--kubeconfig=${kubeletKc}`,
      `--hostname-override=${NODE_NAME}`, `--node-ip=${POD_NET.hostIp}`, `--root-dir=${kubeletDir}`,
      `--cert-dir=${join(dir, 'kubelet-pki')}`, '--v=1'], { logFile: join(logDir, 'kubelet.log') });
    started.push(kubelet);

    // kube-scheduler
    const schedPort = await freePort();
    const scheduler = spawnLogged(bin('kube-scheduler'), [`--kubeconfig=${schedulerKc}`,
      `--authentication-kubeconfig=${schedulerKc}`, `--authorization-kubeconfig=${schedulerKc}`,
      '--bind-address=127.0.0.1', `--secure-port=${schedPort}`, '--leader-elect=false', `--cert-dir=${join(dir, 'scheduler-certs')}`],
    { logFile: join(logDir, 'kube-scheduler.log') });
    started.push(scheduler);

    // CoreDNS on the bridge address
    const [healthPort, readyPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'Corefile'), corefile(adminKc, healthPort, readyPort));
    const coredns = spawnLogged(bin('coredns'), ['-conf', join(dir, 'Corefile')], { logFile: join(logDir, 'coredns.log') });
    started.push(coredns);

    await waitFor(`node ${NODE_NAME} Ready`, async () => {
      if (kubelet.exitStatus()) throw new HarnessError('PROCESS_EXITED', `kubelet exited: see ${join(logDir, 'kubelet.log')}`);
      const r = await cp.get(`/api/v1/nodes/${NODE_NAME}`);
      if (r.status !== 200) return undefined;
      const node = JSON.parse(r.body) as { status?: { conditions?: Array<{ type: string; status: string }> } };
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    }, 120_000);
    step(`node ${NODE_NAME} Ready`);
    await waitFor('CoreDNS ready', async () => {
      if (coredns.exitStatus()) throw new HarnessError('PROCESS_EXITED', `coredns exited: see ${join(logDir, 'coredns.log')}`);
      return (await fetch(`http://127.0.0.1:${readyPort}/ready`, { signal: AbortSignal.timeout(2000) })).ok ? true : undefined;
    }, 60_000);

    // the provisioner: PV folders under <node>/pv, made by helper pods that run our member image as its user
    const pvDir = join(dir, 'pv');
    mkdirSync(pvDir, { recursive: true });
    chmodSync(pvDir, 0o777);
    await cp.kubectl(['apply', '-f', '-'], provisionerManifests(pvDir, opts.images.svc[opts.images.newest]));
    const provisioner = spawnLogged(bin('local-path-provisioner'), ['start',
      `--kubeconfig=${adminKc}`, `--namespace=${PROVISIONER_NS}`, '--configmap-name=local-path-config',
      `--helper-image=${opts.images.svc[opts.images.newest]}`, '--service-account-name=local-path-provisioner'],
    { logFile: join(logDir, 'local-path-provisioner.log') });
    started.push(provisioner);
    await waitFor('kube-scheduler /healthz', async () => {
      for (const p of [scheduler, provisioner]) {
        if (p.exitStatus()) throw new HarnessError('PROCESS_EXITED', `${p.name} exited: see ${p.logFile}`);
      }
      return (await insecureStatus(`https://127.0.0.1:${schedPort}/healthz`)) === 200 ? true : undefined;
    }, 60_000);

    const checkNetwork = async (when: string): Promise<void> => {
      for (const ns of await podNetnsNames()) await assertPodRoutes(ns);
      const now = await readHostNet();
      assertHostNetUnchanged(hostNetBefore, now, when);
    };
    await checkNetwork('after the node started');
    step('provisioner running; network rules hold');
    return {
      name: NODE_NAME, containerdSocket: socket, dnsIp: POD_NET.hostIp, logDir, hostNetBefore, checkNetwork,
      killContainer: async (containerID) => {
        const id = /^containerd:\/\/([0-9a-f]+)$/.exec(containerID)?.[1];
        if (!id) throw new HarnessError('BAD_INPUT', `not a containerd container id: "${containerID}"`);
        await runCommand(['ctr', '--address', socket, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id], { timeoutMs: 20_000 });
      },
      stop: async () => {
        try {
          step('stopping: deleting every workload and pod');
          await deleteAllPods(cp);
          step('pods deleted');
          await checkNetwork('before the node stopped');
        } finally {
          await teardown();
        }
        const after = await readHostNet();
        assertHostNetUnchanged(hostNetBefore, after, 'after the node stopped');
        const left = await podNetnsNames();
        if (left.length) throw new HarnessError('NETWORK_RULE', `pod network namespaces left behind after the node stopped: ${left.join(', ')}`);
      },
    };
  } catch (e) {
    await teardown();
    throw e;
  }
}

/** Deletes the workloads and pods of every namespace (grace 5 s) and waits until the kubelet has stopped them. */
async function deleteAllPods(cp: ControlPlane): Promise<void> {
  // owners first, or their controllers make new pods
  await cp.kubectl(['delete', 'statefulsets,deployments,replicasets,jobs,daemonsets', '--all', '--all-namespaces', '--wait=false']).catch(() => undefined);
  await cp.kubectl(['delete', 'pods', '--all', '--all-namespaces', '--grace-period=5', '--wait=false']).catch(() => undefined);
  await waitFor('every pod gone', async () => {
    const r = await cp.get('/api/v1/pods');
    return (JSON.parse(r.body) as { items: unknown[] }).items.length === 0 ? true : undefined;
  }, 60_000).catch(() => undefined);
}

/** Kills and deletes every container task containerd still runs (pods the kubelet did not stop). */
async function killTasks(socket: string): Promise<void> {
  const ctr = (...a: string[]): Promise<string> => runCommand(['ctr', '--address', socket, '-n', 'k8s.io', ...a], { timeoutMs: 20_000 }).then((r) => r.stdout);
  const ids = (await ctr('tasks', 'ls', '-q').catch(() => '')).split('\n').filter(Boolean);
  for (const id of ids) await ctr('tasks', 'kill', '-s', 'SIGKILL', '--all', id).catch(() => undefined);
  for (const id of ids) await ctr('tasks', 'delete', '-f', id).catch(() => undefined);
}
