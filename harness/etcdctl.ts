// Runs the reference client, /usr/bin/etcdctl (3.4.23), against any endpoints: a reference cluster
// or our own server. ETCDCTL_API=3 is always set; ETCDCTL_* variables of the calling environment are
// dropped so the machine's settings cannot change what a test sees.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { HarnessError } from './errors.js';

export const ETCDCTL_BIN = process.env.SVC_TEST_ETCDCTL ?? '/usr/bin/etcdctl';

/** The error for a reference binary that is not installed (npm test's pretest installs them). */
export function missingPrerequisite(binary: string): HarnessError {
  return new HarnessError('MISSING_PREREQUISITE', `${binary} not found: run scripts/install-prereqs.sh`);
}

export interface EtcdctlOptions {
  /** host:port or URLs; joined with commas into --endpoints. Omit to pass --endpoints yourself. */
  endpoints?: readonly string[];
  /** Added to the environment (after ETCDCTL_API=3). */
  env?: NodeJS.ProcessEnv;
  /** Kill the client after this long. Default 30 s. */
  timeoutMs?: number;
  /** Written to the client's standard input. */
  input?: string;
  /** Another client binary (e.g. the reference 3.5's etcdctl or etcdutl). Default ETCDCTL_BIN. */
  bin?: string;
}

export interface EtcdctlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `etcdctl [--endpoints=...] ...args` (or opts.bin); never rejects for a non-zero exit (see `code`). */
export function etcdctl(args: readonly string[], opts: EtcdctlOptions = {}): Promise<EtcdctlResult> {
  const bin = opts.bin ?? ETCDCTL_BIN;
  if (!existsSync(bin)) return Promise.reject(missingPrerequisite(bin));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ETCDCTL_')) env[k] = v;
  Object.assign(env, { ETCDCTL_API: '3' }, opts.env);
  const full = opts.endpoints ? [`--endpoints=${opts.endpoints.join(',')}`, ...args] : [...args];
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      full,
      { env, timeout: opts.timeoutMs ?? 30000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr: err && code === -1 ? `${stderr}${err.message}` : stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}
