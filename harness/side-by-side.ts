// One single-member cluster of svc or of the reference 3.5 on loopback, placed by memberArgs (the same flags for
// both), for tests that run the same commands against each and compare the answers; and (useClustersSideBySide) a
// whole svc cluster next to a whole reference cluster for one mocha suite.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { memberArgs } from './member-args.js';
import { freePorts } from './ports.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from './process.js';
import { REFERENCE_VERSIONS, referenceBin, type ReferenceCluster, type ReferenceLine } from './reference-cluster.js';
import { printLogsOnFailure, spawnSvc, type SvcCluster } from './svc-cluster.js';

export type Target = 'svc' | 'reference';
export const TARGETS = ['svc', 'reference'] as const;

export interface SingleMember {
  proc: LoggedProcess;
  /** <scheme>://127.0.0.1:<port> */
  clientUrl: string;
}

/**
 * Starts one member named `m` (without waiting for it): data dir `<dir>/<name>.data`, log `<dir>/<name>.log`,
 * the client URL of `scheme` (default http; https needs the certificate flags in `flags`), then `flags`; the
 * reference of release `line` (default 3.5), and svc as that release.
 */
export function spawnSingleMember(
  target: Target,
  o: { dir: string; name: string; clientPort: number; peerPort: number; scheme?: 'http' | 'https'; flags?: readonly string[]; line?: ReferenceLine },
): SingleMember {
  const clientUrl = `${o.scheme ?? 'http'}://127.0.0.1:${o.clientPort}`;
  const peerUrl = `http://127.0.0.1:${o.peerPort}`;
  const dataDir = join(o.dir, `${o.name}.data`);
  mkdirSync(dataDir, { mode: 0o700 });
  const args = [...memberArgs({ name: 'm', dataDir, clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'side-by-side', state: 'new' }), ...(o.flags ?? [])];
  const log = { logFile: join(o.dir, `${o.name}.log`), name: o.name };
  // (svc runs as the reference release of that line: SVC_VERSION=3.6.16 next to etcd 3.6.16)
  const line = o.line ?? '3.5';
  const proc = target === 'svc' ? spawnSvc(args, { ...log, version: o.line && REFERENCE_VERSIONS[line] }) : spawnLogged(referenceBin(line, 'etcd'), args, log);
  return { proc, clientUrl };
}

/**
 * svc and the reference started side by side with the same `flags` (names `<tag>-svc`, `<tag>-reference`, free
 * ports); resolves once both answer /health (over TLS with `wait`'s CA and client certificate for https). Both
 * processes are pushed on `procs` for the caller's cleanup.
 */
export async function startSideBySide(o: {
  dir: string;
  tag: string;
  procs: LoggedProcess[];
  flags?: readonly string[];
  scheme?: 'http' | 'https';
  wait?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  line?: ReferenceLine;
}): Promise<Record<Target, SingleMember>> {
  const ports = await freePorts(4);
  const out = {} as Record<Target, SingleMember>;
  await Promise.all(
    TARGETS.map(async (target, i) => {
      const m = spawnSingleMember(target, { dir: o.dir, name: `${o.tag}-${target}`, clientPort: ports[2 * i], peerPort: ports[2 * i + 1], scheme: o.scheme, flags: o.flags, line: o.line });
      o.procs.push(m.proc);
      await waitForHttp(`${m.clientUrl}/health`, { timeoutMs: 30000, process: m.proc, ...o.wait });
      out[target] = m;
    }),
  );
  return out;
}

/** The two clusters of a suite (read them in its tests, once its `before` has started them). */
export interface ClustersSideBySide {
  readonly svc: SvcCluster;
  readonly ref: ReferenceCluster;
}

/**
 * Registers a suite's hooks: both clusters started before its tests (`start` gives the two starts, run at once), svc's
 * log tails printed when a test fails, both stopped after them.
 */
export function useClustersSideBySide(start: () => [Promise<SvcCluster>, Promise<ReferenceCluster>]): ClustersSideBySide {
  let svc: SvcCluster | undefined;
  let ref: ReferenceCluster | undefined;
  printLogsOnFailure(() => [svc]);
  before(async () => {
    [svc, ref] = await Promise.all(start());
  });
  after(async () => {
    await Promise.all([svc?.close(), ref?.stop()]);
  });
  return {
    get svc() {
      return svc!;
    },
    get ref() {
      return ref!;
    },
  };
}
