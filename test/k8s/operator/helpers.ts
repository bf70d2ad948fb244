// Helpers of the operator's tests against the testbed.
import { svcClusterCrdYaml } from '../../../operator/controller/crd.js';
import type { Testbed } from '../testbed.js';

/** Applies the SvcCluster CRD (generated) and waits until it is served. */
export async function installCrd(tb: Testbed): Promise<void> {
  await tb.kubectl(['apply', '--server-side', '-f', '-'], svcClusterCrdYaml());
  await tb.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/svcclusters.svc.dev']);
}

/** Creates a namespace and waits for its default service account (pods need it). */
export async function createNamespace(tb: Testbed, ns: string): Promise<void> {
  await tb.kubectl(['create', 'namespace', ns]);
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const out = await tb.kubectl(['-n', ns, 'get', 'serviceaccount', '-o', 'name']).catch(() => '');
    if (out.includes('serviceaccount/default')) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no default service account in ${ns}`);
}
