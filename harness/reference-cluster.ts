// A real reference cluster (etcd 3.4.23 from Debian, /usr/bin/etcd, or opts.binary such as the 3.5) on
// loopback, for tests that compare our behaviour with the reference's or that need a live cluster to talk to.
// Everything (data dirs, one log file per member) lives in one temp dir; stop() kills the members
// and removes it (set SVC_TEST_KEEP=1 to keep it for a post-mortem).

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdctl, missingPrerequisite, type EtcdctlOptions, type EtcdctlResult } from './etcdctl.js';
import { memberArgs } from './member-args.js';
import { freePorts } from './ports.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from './process.js';

export { etcdctl, missingPrerequisite, type EtcdctlOptions, type EtcdctlResult } from './etcdctl.js';

export const ETCD_BIN = process.env.SVC_TEST_ETCD ?? '/usr/bin/etcd';

/** The versions scripts/build-reference.sh builds, per release line (keep the two in step). */
export const REFERENCE_VERSIONS = { '3.5': '3.5.21', '3.6': '3.6.16', '3.7': '3.7.3' } as const;
export type ReferenceLine = keyof typeof REFERENCE_VERSIONS;

/**
 * Folder of a reference release line's etcd, etcdutl and etcdctl, built once from the Go module proxy by
 * scripts/build-reference.sh (npm test's pretest runs it): Debian ships only 3.4. SVC_TEST_REF35_DIR (..._REF36_,
 * ..._REF37_) overrides the folder, as in the script.
 */
export function referenceDir(line: ReferenceLine): string {
  return (
    process.env[`SVC_TEST_REF${line.replace('.', '')}_DIR`] ||
    join(process.env.XDG_CACHE_HOME || join(process.env.HOME || '/root', '.cache'), 'svc', 'ref', `v${REFERENCE_VERSIONS[line]}`)
  );
}

export const REF35_DIR = referenceDir('3.5');

/** Path of a reference binary of a release line; throws the missing-prerequisite error when absent. */
export function referenceBin(line: ReferenceLine, name: 'etcd' | 'etcdutl' | 'etcdctl'): string {
  const bin = join(referenceDir(line), name);
  if (!existsSync(bin)) throw missingPrerequisite(bin);
  return bin;
}

/** Path of a reference 3.5 binary ('etcd', 'etcdutl', 'etcdctl'). */
export function ref35(name: 'etcd' | 'etcdutl' | 'etcdctl'): string {
  return referenceBin('3.5', name);
}

export interface ReferenceClusterOptions {
  /** Members. Default 3. */
  size?: number;
  /** --initial-cluster-token. Default a random one. */
  token?: string;
  /** Extra flags for every member (e.g. ['--logger=zap', '--enable-v2=true']). */
  extraArgs?: readonly string[];
  /** Extra environment for every member. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for every member's /health to answer 200. Default 30 s. */
  timeoutMs?: number;
  /** The etcd binary to run (e.g. ref35('etcd')). Default ETCD_BIN (Debian's 3.4.23). */
  binary?: string;
}

export interface ReferenceMember {
  name: string;
  /** http://127.0.0.1:<port> */
  clientUrl: string;
  peerUrl: string;
  /** 127.0.0.1:<port>, as etcdctl --endpoints wants it. */
  endpoint: string;
  dataDir: string;
  logFile: string;
  process: LoggedProcess;
}

export interface ReferenceCluster {
  /** The temp dir holding every data dir and log. */
  dir: string;
  members: ReferenceMember[];
  endpoints: string[];
  clientUrls: string[];
  peerUrls: string[];
  /** etcdctl against this cluster's endpoints (unless opts.endpoints says otherwise). */
  etcdctl(args: readonly string[], opts?: EtcdctlOptions): Promise<EtcdctlResult>;
  /** Kills every member (SIGKILL) and removes the temp dir. Stop a member gracefully with members[i].process.stop(). */
  stop(): Promise<void>;
}

/** Starts a fresh N-member reference cluster and waits until every member reports healthy. */
export async function startReferenceCluster(opts: ReferenceClusterOptions = {}): Promise<ReferenceCluster> {
  const binary = opts.binary ?? ETCD_BIN;
  if (!existsSync(binary)) throw missingPrerequisite(binary);
  const size = opts.size ?? 3;
  const token = opts.token ?? `ref-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-ref-'));
  const ports = await freePorts(2 * size);
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `ref${i}`,
    clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
    peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
    endpoint: `127.0.0.1:${ports[2 * i]}`,
    dataDir: join(dir, `ref${i}.data`),
    logFile: join(dir, `ref${i}.log`),
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const members: ReferenceMember[] = [];
  const shutdown = async (removeDir: boolean) => {
    // SIGKILL: the data is thrown away anyway, and members stopped all at once with SIGTERM spend
    // seconds trying to transfer leadership to peers that are going away too.
    await Promise.all(members.map((m) => m.process.stop('SIGKILL', 5000)));
    if (removeDir) rmSync(dir, { recursive: true, force: true });
  };
  const stop = () => shutdown(process.env.SVC_TEST_KEEP !== '1');
  try {
    for (const s of specs) {
      mkdirSync(s.dataDir, { recursive: true, mode: 0o700 });
      const args = [...memberArgs({ ...s, initialCluster, token, state: 'new' }), ...(opts.extraArgs ?? [])];
      const proc = spawnLogged(binary, args, { logFile: s.logFile, name: s.name, env: opts.env });
      members.push({ ...s, process: proc });
    }
    const timeoutMs = opts.timeoutMs ?? 30000;
    await Promise.all(members.map((m) => waitForHttp(`${m.clientUrl}/health`, { timeoutMs, process: m.process })));
  } catch (err) {
    await shutdown(false); // keep the logs the error message points at
    throw err;
  }
  const endpoints = members.map((m) => m.endpoint);
  return {
    dir,
    members,
    endpoints,
    clientUrls: members.map((m) => m.clientUrl),
    peerUrls: members.map((m) => m.peerUrl),
    etcdctl: (args, o = {}) => etcdctl(args, { endpoints, ...o }),
    stop,
  };
}
