// One single-member cluster of svc or of the reference 3.5 on loopback, placed by memberArgs (the same flags for
// both), for tests that run the same commands against each and compare the answers.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { memberArgs } from './member-args.js';
import { spawnLogged, type LoggedProcess } from './process.js';
import { ref35 } from './reference-cluster.js';
import { spawnSvc } from './svc-cluster.js';

export type Target = 'svc' | 'reference';
export const TARGETS = ['svc', 'reference'] as const;

export interface SingleMember {
  proc: LoggedProcess;
  /** <scheme>://127.0.0.1:<port> */
  clientUrl: string;
}

/**
 * Starts one member named `m` (without waiting for it): data dir `<dir>/<name>.data`, log `<dir>/<name>.log`,
 * the client URL of `scheme` (default http; https needs the certificate flags in `flags`), then `flags`.
 */
export function spawnSingleMember(
  target: Target,
  o: { dir: string; name: string; clientPort: number; peerPort: number; scheme?: 'http' | 'https'; flags?: readonly string[] },
): SingleMember {
  const clientUrl = `${o.scheme ?? 'http'}://127.0.0.1:${o.clientPort}`;
  const peerUrl = `http://127.0.0.1:${o.peerPort}`;
  const dataDir = join(o.dir, `${o.name}.data`);
  mkdirSync(dataDir, { mode: 0o700 });
  const args = [...memberArgs({ name: 'm', dataDir, clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'side-by-side', state: 'new' }), ...(o.flags ?? [])];
  const log = { logFile: join(o.dir, `${o.name}.log`), name: o.name };
  return { proc: target === 'svc' ? spawnSvc(args, log) : spawnLogged(ref35('etcd'), args, log), clientUrl };
}
