// A request a person writes on an SvcCluster (an annotation holding a token: backup-now, verify-now, recover) and,
// with --wait, the operator's answer to that token read back from the status.
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, PLURAL, type SvcClusterStatus } from '../api/types.js';
import { isStatus, KubeApi } from '../runtime/kubernetes/kube-api.js';
import { StatusError } from './status-view.js';

const [GROUP, VERSION] = API_VERSION.split('/');

/** Sets the request annotation `key` to `token`; a StatusError when there is no such SvcCluster. */
export async function annotateRequest(kc: k8s.KubeConfig, namespace: string, name: string, key: string, token: string): Promise<void> {
  try {
    await new KubeApi(kc).patchClusterAnnotation(namespace, name, key, token);
  } catch (e) {
    if (isStatus(e, 404)) throw new StatusError(`SvcCluster ${namespace}/${name} not found`);
    throw e;
  }
}

/**
 * Reads the SvcCluster's status every second until `answer` finds the answer in it, for at most `seconds`: the answer,
 * or (none in time) the status read last, for the message.
 */
export async function awaitAnswer<T>(kc: k8s.KubeConfig, namespace: string, name: string, seconds: number, answer: (s: SvcClusterStatus | undefined) => T | undefined): Promise<{ answer: T } | { answer?: undefined; status: SvcClusterStatus | undefined }> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const c = await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as { status?: SvcClusterStatus };
    const a = answer(c.status);
    if (a !== undefined) return { answer: a };
    if (Date.now() > until) return { status: c.status };
    await new Promise((r) => setTimeout(r, 1000));
  }
}
