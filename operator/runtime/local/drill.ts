// Running a restore drill: a snapshot file on this machine (wherever the backup came from) is restored into a scratch
// directory, a lone svc member (no peers) is started there on loopback, and its KV hash at the backed-up revision
// is read (here: the local runtime runs it in its process; the Kubernetes drill Job runs the same code in a pod); a
// delta chain is replayed into such a member (a restore's file is its snapshot; a drill reads its keyspace hash).
// Judging the result is backup/verify.ts's (pure). The scratch member and its directory are gone when this returns,
// whatever happened.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { restoreSnapshot } from '../../../server/cluster/restore.js';
import { nopLogger } from '../../../server/log/logger.js';
import { MemberClient } from '../../members/index.js';
import { Client } from '../../../server/client/index.js';
import type { RevisionChange } from '../../backup/delta.js';
import { keyspaceHash, replayChanges, ReplayError } from '../delta-replay.js';
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

/** A lone member restored from a snapshot, serving on loopback (startScratchMember). */
export interface ScratchMember {
  clientURL: string;
  /** Why the process ended, once it has. */
  exited(): string | undefined;
  /** The last lines of its log. */
  logTail(): string;
  /** Kills the process and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Restores `snapshotFile` into `dir` (emptied first: a drill killed half-way left its scratch behind) and starts a
 * lone svc member there on free loopback ports, with no peers. Throws when the restore fails (the file's checksum,
 * its format); the member may still be starting when this returns.
 */
export async function startScratchMember(snapshotFile: string, scratchDir: string, svcEntry: string): Promise<ScratchMember> {
  const dir = resolve(scratchDir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'member.log');
  const remove = () => { if (existsSync(dir)) rmSync(dir, { recursive: true, force: true }); };
  let child: ChildProcess;
  let exited: string | undefined;
  try {
    const [clientPort, peerPort] = await freePorts(2);
    const peerURL = `http://127.0.0.1:${peerPort}`;
    const clientURL = `http://127.0.0.1:${clientPort}`;
    await restoreSnapshot(nopLogger, { snapshotFile, dataDir, name: MEMBER, initialCluster: [{ name: MEMBER, peerURLs: [peerURL] }], initialClusterToken: 'svc-restore-drill', advertisePeerURLs: [peerURL] });
    const fd = openSync(logFile, 'a');
    try {
      child = spawn(process.execPath, [...svcNodeArgs(svcEntry),
        '--name', MEMBER, '--data-dir', dataDir,
        '--listen-client-urls', clientURL, '--advertise-client-urls', clientURL,
        '--listen-peer-urls', peerURL, '--initial-advertise-peer-urls', peerURL,
        '--initial-cluster', `${MEMBER}=${peerURL}`, '--initial-cluster-token', 'svc-restore-drill'], { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    child.on('exit', (code, signal) => { exited = signal ? `killed by ${signal}` : `exited with code ${code}`; });
    return {
      clientURL,
      exited: () => exited,
      logTail: () => tail(logFile),
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const gone = new Promise((r) => child.once('exit', r));
          child.kill('SIGKILL');
          await gone;
        }
        remove();
      },
    };
  } catch (e) {
    remove();
    throw e;
  }
}

/**
 * Tries `probe` on a scratch member every 100 ms until it answers (its answer), the member's process ends (why), or
 * `timeoutMs` passed (the last error's message). A probe that throws is tried again.
 */
async function untilServing<T>(member: ScratchMember, timeoutMs: number, probe: () => Promise<T>): Promise<{ answer: T } | { exited: string } | { timedOut: string }> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    const exited = member.exited();
    if (exited) return { exited };
    try {
      return { answer: await probe() };
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) return { timedOut: last };
    await sleep(100);
  }
}

/** Restores `snapshotFile` into a scratch member and reads its KV hash at `revision`; failures come back as `error`. */
export async function runDrill(i: DrillInput): Promise<DrillMeasure> {
  let member: ScratchMember;
  try {
    member = await startScratchMember(i.snapshotFile, i.scratchDir, i.svcEntry);
  } catch (e) {
    return { error: (e as Error).message };
  }
  const client = new MemberClient({ timeoutMs: 2000, attempts: 1 });
  try {
    const timeoutMs = i.timeoutMs ?? 60_000;
    const r = await untilServing(member, timeoutMs, async (): Promise<DrillMeasure> => {
      try {
        const h = await client.hashKV(member.clientURL, i.revision);
        return { hash: h.hash, compactRevision: h.compactRevision };
      } catch (e) {
        const message = (e as Error).message;
        // an answer from a serving member that refuses the revision is final (compacted, a future revision)
        if (/compacted|future revision/.test(message)) return { error: `the restored member refuses revision ${i.revision}: ${message}` };
        throw e;
      }
    });
    if ('exited' in r) return { error: `the scratch member ${r.exited}: ${member.logTail()}` };
    if ('timedOut' in r) return { error: `the scratch member did not serve within ${Math.round(timeoutMs / 1000)} s (${r.timedOut}); its log: ${member.logTail()}` };
    return r.answer;
  } finally {
    client.close();
    await member.stop();
  }
}

/**
 * The scratch member of replayIntoSnapshot failed (ended, or did not serve in time), as opposed to a replay that does
 * not add up (a ReplayError of delta-replay.ts); still a ReplayError by class and name, as it was thrown before.
 */
export class ScratchMemberError extends ReplayError {}

/** A scratch member restored from `snapshot` (at `base`) with `changes` replayed into it. */
interface ReplayInput {
  snapshot: string;
  base: number;
  changes: RevisionChange[];
  scratchDir: string;
  svcEntry: string;
}

/**
 * Restores `snapshot` into a lone scratch member in `scratchDir`, replays `changes` into it one transaction per
 * revision (delta-replay.ts), hands it to `then`, and removes it, whatever happened.
 */
async function withReplayed<T>(i: ReplayInput, then: (client: Client, url: string) => Promise<T>): Promise<T> {
  const member = await startScratchMember(i.snapshot, i.scratchDir, i.svcEntry);
  const client = await Client.connect({ endpoints: [member.clientURL], commandTimeoutMs: 5000 });
  try {
    const r = await untilServing(member, 60_000, () => client.get('\u0000', { serializable: true, countOnly: true }));
    if ('exited' in r) throw new ScratchMemberError(`the scratch member the deltas are replayed into ${r.exited}: ${member.logTail()}`);
    if ('timedOut' in r) throw new ScratchMemberError(`the scratch member the deltas are replayed into did not serve within 60 s (${r.timedOut}): ${member.logTail()}`);
    await replayChanges(client, i.base, i.changes);
    return await then(client, member.clientURL);
  } finally {
    client.close();
    await member.stop();
  }
}

/**
 * The snapshot at `base` with `changes` replayed, written to `out`: a lone scratch member restored from it in
 * `scratchDir` takes the changes one transaction per revision, and its snapshot is the file members are restored
 * from. The local runtime's restore and the Kubernetes restore Job (cli/backup.ts) both run it (delta-replay.ts replays).
 */
export async function replayIntoSnapshot(i: ReplayInput & { out: string }): Promise<string> {
  return withReplayed(i, async (_client, url) => {
    const members = new MemberClient({ timeoutMs: 10_000, attempts: 3 });
    try {
      await members.snapshot(url, 'replay', i.out);
      return i.out;
    } finally {
      members.close();
    }
  });
}

/**
 * A drill of a delta chain: `changes` replayed on the snapshot at `base`, then the keyspace hash at the last revision
 * (keyspaceHash), to be compared with the cluster's; failures (a replay that does not add up, a scratch member that
 * did not serve) come back as `error`.
 */
export async function drillChain(i: ReplayInput): Promise<{ hash: string; keys: number } | { error: string }> {
  try {
    return await withReplayed(i, (client) => keyspaceHash(client, i.changes.at(-1)?.revision ?? i.base));
  } catch (e) {
    return { error: (e as Error).message };
  }
}
