// Object-store destinations opened with the Secrets of a namespace, read through the API (get only, as the chart's
// role allows): the operator lists a bucket to pick a restore point before it creates anything, checks that a
// backup Job's Secrets are there before it starts one, and `kubectl svc backups` lists restore points as its user.
import type { CoreV1Api } from '@kubernetes/client-node';
import type { S3Destination } from '../../api/types.js';
import type { DestinationAccess } from '../../backup/destinations/index.js';
import { isStatus } from './kube-api.js';

/** The Secrets the destinations name (credentials, CA bundles), read once; one that is not there reads as absent. */
export async function kubeDestinationAccess(core: CoreV1Api, namespace: string, dests: readonly S3Destination[]): Promise<DestinationAccess> {
  const names = [...new Set(dests.flatMap((d) => [d.credentialsSecret, d.caSecret]).filter((n): n is string => n !== undefined))];
  const data = new Map<string, Record<string, string>>();
  for (const name of names) {
    try {
      data.set(name, (await core.readNamespacedSecret({ namespace, name })).data ?? {});
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
  }
  return {
    secrets: (secret, key) => {
      const v = data.get(secret)?.[key];
      return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8').trim() || undefined;
    },
    secretsWhere: (secret) => `the Secret ${namespace}/${secret}`,
  };
}
