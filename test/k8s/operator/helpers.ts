// Helpers of the operator's tests against the testbed (fixture.ts has the before/after of a test file).
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Controller, type ControllerOptions } from '../../../operator/controller/controller.js';
import { svcClusterCrdYaml } from '../../../operator/api/crd.js';
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
