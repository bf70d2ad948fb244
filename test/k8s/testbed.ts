// The whole testbed: the control plane plus one real node (kubelet, containerd, CoreDNS, a PV provisioner; see
// node/node.ts), in one call. Operator tests use this:
//   const tb = await startTestbed({ workDir });   ...   await tb.stop();
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './binaries.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { buildImages, type NodeImages } from './node/images.js';
import { cleanNodeLeftovers, startNode, type Node } from './node/node.js';

/** Options of startTestbed. */
export interface TestbedOptions {
  /** Work folder (wiped first). Default: <repo>/test/k8s/.work/<name>. */
  workDir?: string;
  /** Name of the default work folder (default "testbed"). */
  name?: string;
  binDir?: string;
}

/** A running control plane with one real node. */
export interface Testbed {
  readonly workDir: string;
  readonly controlPlane: ControlPlane;
  readonly node: Node;
  /** The images imported into the node (svc per release, the operator, pause). */
  readonly images: NodeImages;
  /** Admin kubeconfig: <workDir>/kubeconfig. */
  readonly kubeconfigPath: string;
  kubectl(args: string[], input?: string): Promise<string>;
  helm(args: string[]): Promise<string>;
  /** Deletes every pod (grace 5s), stops the node, then kube-controller-manager, kube-apiserver and the storage member. */
  stop(): Promise<void>;
}

/** SIGKILLs processes left by an earlier, crashed run in workDir (found by workDir in their argv or env). */
export function killLeftovers(workDir: string): number {
  let killed = 0;
  if (!existsSync('/proc')) return 0;
  const needle = Buffer.from(workDir + '/');
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`);
      let env = Buffer.alloc(0);
      try { env = readFileSync(`/proc/${entry}/environ`); } catch { /* not ours to read */ }
      if (cmd.includes(needle) || env.includes(needle)) {
        process.kill(Number(entry), 'SIGKILL');
        killed++;
      }
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

/** Starts the storage member (svc, or etcd with SVC_K8S_STORAGE=etcd), kube-apiserver, kube-controller-manager and the node. */
export async function startTestbed(opts: TestbedOptions = {}): Promise<Testbed> {
  const root = repoRoot();
  const workDir = opts.workDir ?? join(root, 'test', 'k8s', '.work', opts.name ?? 'testbed');
  killLeftovers(workDir);
  // an aborted run's mounts (the kubelet's, containers') would make the folder impossible to remove
  await cleanNodeLeftovers(join(workDir, 'node'));
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const cp = await startControlPlane({ workDir, binDir: opts.binDir });
  let node: Node;
  let images: NodeImages | undefined;
  try {
    images = await buildImages();
    node = await startNode({
      workDir, controlPlane: cp, binDir: cp.binDir, images,
      importImages: async (socket) => { await buildImages(socket); },
    });
  } catch (e) {
    await cp.stop();
    throw e;
  }
  return {
    workDir, controlPlane: cp, node, images, kubeconfigPath: cp.kubeconfigPath,
    kubectl: (args, input) => cp.kubectl(args, input),
    helm: (args) => cp.helm(args),
    stop: async () => {
      try { await node.stop(); } finally { await cp.stop(); }
    },
  };
}
