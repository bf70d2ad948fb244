// Running a restore drill: a snapshot file on this machine (wherever the backup came from) is restored into a scratch
// directory, a lone svc member (no peers) is started there on loopback, and its KV hash at the backed-up revision
// is read (here: the local runtime runs it in its process; the Kubernetes drill Job runs the same code in a pod).
// Judging the result against the hash recorded at backup time is backup/verify.ts's (pure). The scratch member
// and its directory are gone when this returns, whatever happened.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { restoreSnapshot } from '../../../server/cluster/restore.js';
import { nopLogger } from '../../../server/log/logger.js';
import { MemberClient } from '../../members/index.js';
import type { DrillMeasure } from '../../backup/verify.js';
import { freePorts } from './ports.js';
import { svcNodeArgs } from './svc-process.js';

export interface DrillInput {
  /** The snapshot file (the reference's format, with its trailing sha256). */
  snapshotFile: string;
  /** The revision whose KV hash is read. */
  revision: number;
  /** A directory of the drill's own: created, used, removed. */
  scratchDir: string;
  /** The compiled svc.js the scratch member runs. */
  svcEntry: string;
  /** How long the member may take to serve. Default 60 s. */
  timeoutMs?: number;
}

const MEMBER = 'drill';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The last lines of the scratch member's log, for a failure message. */
function tail(logFile: string, n = 3): string {
  try {
    return readFileSync(logFile, 'utf8').trim().split('\n').slice(-n).join(' | ');
  } catch {
    return '(no log)';
  }
}

/** Restores `snapshotFile` into a scratch member and reads its KV hash at `revision`; failures come back as `error`. */
export async function runDrill(i: DrillInput): Promise<DrillMeasure> {
  const dir = resolve(i.scratchDir);
  rmSync(dir, { recursive: true, force: true }); // a drill killed half-way left its scratch behind
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'member.log');
  let child: ChildProcess | undefined;
  const client = new MemberClient({ timeoutMs: 2000, attempts: 1 });
  try {
    const [clientPort, peerPort] = await freePorts(2);
    const peerURL = `http://127.0.0.1:${peerPort}`;
    const clientURL = `http://127.0.0.1:${clientPort}`;
    try {
      await restoreSnapshot(nopLogger, { snapshotFile: i.snapshotFile, dataDir, name: MEMBER, initialCluster: [{ name: MEMBER, peerURLs: [peerURL] }], initialClusterToken: 'svc-restore-drill', advertisePeerURLs: [peerURL] });
    } catch (e) {
      return { error: (e as Error).message };
    }
    const fd = openSync(logFile, 'a');
    try {
      child = spawn(process.execPath, [...svcNodeArgs(i.svcEntry),
        '--name', MEMBER, '--data-dir', dataDir,
        '--listen-client-urls', clientURL, '--advertise-client-urls', clientURL,
        '--listen-peer-urls', peerURL, '--initial-advertise-peer-urls', peerURL,
        '--initial-cluster', `${MEMBER}=${peerURL}`, '--initial-cluster-token', 'svc-restore-drill'], { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    let exited: string | undefined;
    child.on('exit', (code, signal) => { exited = signal ? `killed by ${signal}` : `exited with code ${code}`; });
    const deadline = Date.now() + (i.timeoutMs ?? 60_000);
    let last = '';
    for (;;) {
      if (exited) return { error: `the scratch member ${exited}: ${tail(logFile)}` };
      try {
        const h = await client.hashKV(clientURL, i.revision);
        return { hash: h.hash, compactRevision: h.compactRevision };
      } catch (e) {
        last = (e as Error).message;
        // an answer from a serving member that refuses the revision is final (compacted, a future revision)
        if (/compacted|future revision/.test(last)) return { error: `the restored member refuses revision ${i.revision}: ${last}` };
      }
      if (Date.now() > deadline) return { error: `the scratch member did not serve within ${Math.round((i.timeoutMs ?? 60_000) / 1000)} s (${last}); its log: ${tail(logFile)}` };
      await sleep(100);
    }
  } finally {
    client.close();
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
