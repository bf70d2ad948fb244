// Where the testbed's binaries are: the per-version cache that test/k8s/build/build.sh fills.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { HarnessError } from '../../harness/errors.js';

/** Pinned versions, read from test/k8s/build/versions.env. */
export interface Versions { k8s: string; etcd: string; helm: string }

/** The repository root (the folder with package.json above this file, in src or in dist). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'test', 'k8s'))) {
    const up = dirname(dir);
    if (up === dir) throw new HarnessError('MISSING_PREREQUISITE', 'cannot find the repository root');
    dir = up;
  }
  return dir;
}

/** Reads the pinned versions. */
export function versions(): Versions {
  const text = readFileSync(join(repoRoot(), 'test', 'k8s', 'build', 'versions.env'), 'utf8');
  const get = (k: string): string => {
    const m = new RegExp(`^${k}=(\\S+)`, 'm').exec(text);
    if (!m) throw new HarnessError('MISSING_PREREQUISITE', `versions.env has no ${k}`);
    return m[1];
  };
  return { k8s: get('K8S_VERSION'), etcd: get('ETCD_VERSION'), helm: get('HELM_VERSION') };
}

/** The binary cache folder (the same rule as build.sh). */
export function binDir(): string {
  if (process.env.SVC_K8S_BIN_DIR) return process.env.SVC_K8S_BIN_DIR;
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'svc', 'k8s', versions().k8s);
}

/** Path of one binary; throws a clear error when build.sh has not been run. */
export function binary(name: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'kubectl' | 'etcd' | 'helm' | 'coredns' | 'local-path-provisioner', dir = binDir()): string {
  const p = join(dir, name);
  if (!existsSync(p)) throw new HarnessError('MISSING_PREREQUISITE', `${p} is missing: run test/k8s/build/build.sh first`);
  return p;
}
