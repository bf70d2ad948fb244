// Volumes of pods that run as local processes: every volume is a host folder. A PersistentVolumeClaim gets a
// PersistentVolume whose folder (<work>/pv/<pv-name>) outlives the pod, so a restarted member finds its data.
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1Container, V1KeyToPath } from '@kubernetes/client-node';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fieldValue, type RefResolver } from './container-command.js';

/** Annotation on the PersistentVolumes this agent provisions. */
export const PROVISIONED_BY = 'svc-test-node-agent';

/** The PersistentVolume the agent creates for a pending claim: pre-bound to it, folder under pvRoot. */
export function volumeForClaim(pvc: V1PersistentVolumeClaim, pvRoot: string): V1PersistentVolume {
  const name = `pvc-${pvc.metadata?.uid ?? ''}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONED_BY } },
    spec: {
      capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
      accessModes: pvc.spec?.accessModes?.length ? pvc.spec.accessModes : ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: pvc.spec?.storageClassName ?? '',
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      hostPath: { path: join(pvRoot, name), type: 'DirectoryOrCreate' },
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: pvc.metadata?.namespace, name: pvc.metadata?.name, uid: pvc.metadata?.uid },
    },
  };
}

/** What materializing a pod's volumes needs from the agent. */
export interface VolumeContext {
  podDir: string;
  workDir: string;
  podIP: string;
  nodeName: string;
  claim(namespace: string, name: string): V1PersistentVolumeClaim | undefined;
  volume(name: string): V1PersistentVolume | undefined;
  resolveRef: RefResolver;
  serviceAccountToken(namespace: string, serviceAccount: string, audience: string | undefined, seconds: number): Promise<string>;
}

/** Host folder of a bound claim, or undefined while the claim is not bound. */
export function claimFolder(namespace: string, claimName: string, ctx: Pick<VolumeContext, 'claim' | 'volume' | 'workDir'>): string | undefined {
  const pvc = ctx.claim(namespace, claimName);
  const pvName = pvc?.spec?.volumeName;
  if (!pvName || pvc?.status?.phase !== 'Bound') return undefined;
  const pv = ctx.volume(pvName);
  if (!pv) return undefined;
  return pv.spec?.hostPath?.path ?? join(ctx.workDir, 'pv', pvName);
}

/** True when every claim the pod uses is bound. */
export function claimsBound(pod: V1Pod, ctx: Pick<VolumeContext, 'claim' | 'volume' | 'workDir'>): boolean {
  const ns = pod.metadata?.namespace ?? 'default';
  return (pod.spec?.volumes ?? []).every((v) => !v.persistentVolumeClaim || claimFolder(ns, v.persistentVolumeClaim.claimName, ctx) !== undefined);
}

function writeItems(dir: string, data: Record<string, string>, items: V1KeyToPath[] | undefined): void {
  mkdirSync(dir, { recursive: true });
  const list = items?.length ? items : Object.keys(data).map((key) => ({ key, path: key }));
  for (const it of list) {
    if (data[it.key] === undefined) continue;
    const p = join(dir, it.path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, data[it.key]);
  }
}

/** Creates a host folder for each volume of the pod; resolves volume name -> folder. */
export async function materializeVolumes(pod: V1Pod, ctx: VolumeContext): Promise<Map<string, string>> {
  const ns = pod.metadata?.namespace ?? 'default';
  const out = new Map<string, string>();
  for (const v of pod.spec?.volumes ?? []) {
    const dir = join(ctx.podDir, 'volumes', v.name);
    if (v.persistentVolumeClaim) {
      const folder = claimFolder(ns, v.persistentVolumeClaim.claimName, ctx);
      if (!folder) throw new Error(`claim ${v.persistentVolumeClaim.claimName} is not bound`);
      mkdirSync(folder, { recursive: true });
      out.set(v.name, folder);
      continue;
    }
    if (v.hostPath) {
      // kept inside the work folder: a test must not write to the real host paths
      const folder = join(ctx.workDir, 'hostpath', v.hostPath.path);
      mkdirSync(folder, { recursive: true });
      out.set(v.name, folder);
      continue;
    }
    mkdirSync(dir, { recursive: true });
    out.set(v.name, dir);
    if (v.configMap || v.secret) {
      const kind = v.configMap ? 'ConfigMap' : 'Secret';
      const name = v.configMap?.name ?? v.secret?.secretName ?? '';
      const data = await ctx.resolveRef(kind, ns, name);
      if (!data && !(v.configMap?.optional ?? v.secret?.optional)) throw new Error(`${kind} ${name} not found`);
      writeItems(dir, data ?? {}, v.configMap?.items ?? v.secret?.items);
    } else if (v.downwardAPI) {
      for (const it of v.downwardAPI.items ?? []) {
        if (it.fieldRef) writeItems(dir, { v: fieldValue(pod, it.fieldRef.fieldPath, ctx.podIP, ctx.nodeName) }, [{ key: 'v', path: it.path }]);
      }
    } else if (v.projected) {
      for (const s of v.projected.sources ?? []) {
        if (s.configMap || s.secret) {
          const kind = s.configMap ? 'ConfigMap' : 'Secret';
          const data = await ctx.resolveRef(kind, ns, s.configMap?.name ?? s.secret?.name ?? '');
          writeItems(dir, data ?? {}, s.configMap?.items ?? s.secret?.items);
        } else if (s.downwardAPI) {
          for (const it of s.downwardAPI.items ?? []) {
            if (it.fieldRef) writeItems(dir, { v: fieldValue(pod, it.fieldRef.fieldPath, ctx.podIP, ctx.nodeName) }, [{ key: 'v', path: it.path }]);
          }
        } else if (s.serviceAccountToken) {
          const t = s.serviceAccountToken;
          const token = await ctx.serviceAccountToken(ns, pod.spec?.serviceAccountName ?? 'default', t.audience, t.expirationSeconds ?? 3600);
          writeItems(dir, { token }, [{ key: 'token', path: t.path }]);
        }
      }
    }
    // emptyDir and anything else: the empty folder
  }
  return out;
}

/** mountPath -> host folder for one container (subPath appended). */
export function containerMounts(c: V1Container, volumeDirs: Map<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of c.volumeMounts ?? []) {
    const base = volumeDirs.get(m.name);
    if (!base) continue;
    const folder = m.subPath ? join(base, m.subPath) : base;
    mkdirSync(folder, { recursive: true });
    out.set(m.mountPath, folder);
  }
  return out;
}
