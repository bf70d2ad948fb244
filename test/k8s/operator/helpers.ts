// Helpers of the operator's tests against the testbed (fixture.ts has the before/after of a test file).
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Controller, type ControllerOptions } from '../../../operator/controller/controller.js';
import { svcClusterCrdYaml } from '../../../operator/api/crd.js';
import type { SvcClusterSpec, SvcClusterStatus } from '../../../operator/api/types.js';
import { runCommand } from '../../../harness/process.js';
import { binary, repoRoot } from '../binaries.js';
import type { Testbed } from '../testbed.js';

/** A controller in this process, as the admin of the testbed, polling fast; `opts` override the test defaults. */
export function testController(tb: Testbed, opts: Partial<ControllerOptions> = {}): Controller {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(tb.kubeconfigPath);
  return new Controller(kc, { snapshotDir: join(tb.workDir, 'operator-snapshots'), resyncMs: 5000, pollMs: 1000, log: () => undefined,
    operatorImage: tb.images.operator, ...opts });
}

/** Applies the SvcCluster CRD (generated) and waits until it is served. */
export async function installCrd(tb: Testbed): Promise<void> {
  await tb.kubectl(['apply', '--server-side', '-f', '-'], svcClusterCrdYaml());
  await tb.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/svcclusters.svc.dev']);
}

/**
 * Removes what a test file created in `ns`: its SvcClusters first (and waits), so that the controllers of the test
 * files that follow (they watch every namespace) find nothing of it to reconcile; then the namespace.
 */
export async function removeNamespace(tb: Testbed | undefined, ns: string): Promise<void> {
  await tb?.kubectl(['-n', ns, 'delete', 'svcc', '--all', '--wait=true', '--timeout=60s']).catch(() => undefined);
  await tb?.kubectl(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
}

/** An SvcCluster as the apiserver holds it (`kubectl get svcc -o json`): the parts the tests read. */
export interface StoredSvcCluster {
  metadata: { uid: string; resourceVersion: string; generation: number; annotations?: Record<string, string> };
  spec: SvcClusterSpec;
  status?: SvcClusterStatus;
}

/** The SvcCluster `name` of `ns` as the apiserver holds it. */
export async function getSvcCluster(tb: Testbed, ns: string, name: string): Promise<StoredSvcCluster> {
  return JSON.parse(await tb.kubectl(['-n', ns, 'get', 'svcc', name, '-o', 'json'])) as StoredSvcCluster;
}

/** The condition `type` of a status (undefined: none). */
export function conditionOf(s: SvcClusterStatus | undefined, type: string) {
  return s?.conditions?.find((c) => c.type === type);
}

/** The environment of the real kubectl with the plugin: the testbed's kubeconfig, and the package's bin/ (kubectl-svc) on PATH. */
export function pluginEnv(tb: Testbed): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: tb.kubeconfigPath, PATH: `${join(repoRoot(), 'bin')}:${process.env.PATH ?? ''}` };
}

/** The real kubectl, run with `env`. */
export function realKubectl(env: NodeJS.ProcessEnv | undefined, args: string[], timeoutMs = 60_000) {
  return runCommand([binary('kubectl'), ...args], { env, timeoutMs });
}

/**
 * Mocha fixture: the real kubectl with the plugin (kubectl svc) of this package, for a suite of the testbed `op.tb`:
 * its environment (pluginEnv) is set before the suite's tests.
 */
export function usePluginKubectl(op: { readonly tb: Testbed }) {
  const box = {
    env: {} as NodeJS.ProcessEnv,
    kubectl: (args: string[], timeoutMs?: number) => realKubectl(box.env, args, timeoutMs),
  };
  before(() => {
    box.env = pluginEnv(op.tb);
  });
  return box as { readonly env: NodeJS.ProcessEnv; readonly kubectl: typeof box.kubectl };
}
