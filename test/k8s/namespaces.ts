// Namespaces of the k8s tests: every one enforces Pod Security `restricted`, as a production cluster may, so every
// pod the tests, the chart or the operator make must meet it.
import { waitFor } from '../../harness/process.js';
import type { Testbed } from './testbed.js';

/** The pod half of `restricted` for the tests' own pods (the image's non-root user). */
export const RESTRICTED_POD = {
  runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
};
/** The container half. */
export const RESTRICTED_CONTAINER = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

/** Creates namespace `ns` labelled to enforce `restricted` and waits for its default service account. */
export async function createRestrictedNamespace(tb: Testbed, ns: string): Promise<void> {
  await tb.kubectl(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } },
  }));
  await waitFor(`the default service account of ${ns}`, async () =>
    (await tb.kubectl(['-n', ns, 'get', 'serviceaccount', 'default', '-o', 'name']).catch(() => '')).trim() ? true : undefined, 60_000);
}
