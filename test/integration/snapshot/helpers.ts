// Helpers of the snapshot interchange tests: clusters built from a snapshot (the reference's etcdctl restore +
// /usr/bin/etcd, or svcctl restore + svc), and the full key space of a cluster as etcdctl sees it.
import { expect } from 'chai';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ETCD_BIN } from '../../../harness/reference-cluster.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';
import { main as svcctlMain } from '../../../server/cli/svcctl.js';
import { fromReference } from '../../../server/cluster/bolt-snapshot.js';
import { decodeKv } from '../../../server/mvcc/kv.js';
import type { BoltFile } from '../../../server/storage/bbolt/reader.js';

export interface KeyState {
  value: string;
  create_revision: number;
  mod_revision: number;
  version: number;
  /** Hex without leading zeros ("0" without a lease); `etcdctl lease list` pads ids to 16 digits. */
  lease: string;
}

export interface KeySpace {
  revision: number;
  /** base64 key -> state. */
  keys: Map<string, KeyState>;
}

/** Runs svcctl in-process. */
export async function svcctl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await svcctlMain(args, { out: (s) => void (out += s), err: (s) => void (err += s), stdin: new PassThrough(), stdoutIsTTY: false }, { ...process.env, ...env });
  return { code, out, err };
}

/** Checked etcdctl: throws with its stderr unless it exits 0. */
export async function ctl(args: string[], endpoints?: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await etcdctl(args, { endpoints, env, timeoutMs: 60000 });
  expect(r.code, `etcdctl ${args.join(' ')}: ${r.stderr}`).to.equal(0);
  return r.stdout;
}

/** `etcdctl lease grant`: the new lease's id (hex). */
export async function grantLease(endpoints: string[], ttl: number): Promise<string> {
  return (await ctl(['lease', 'grant', String(ttl)], endpoints)).split(' ')[1];
}

/** Compacts the key space to `back` revisions below its current revision. */
export async function compactBack(endpoints: string[], back: number): Promise<void> {
  await ctl(['compact', String((await keySpace(endpoints[0])).revision - back)], endpoints);
}

/** A user (password "pw") granted a new role that holds `perm` on every key under `prefix`. */
export async function userWithRole(endpoints: string[], user: string, role: string, perm: 'read' | 'readwrite', prefix: string): Promise<void> {
  await ctl(['user', 'add', user, '--new-user-password=pw'], endpoints);
  await ctl(['role', 'add', role], endpoints);
  await ctl(['role', 'grant-permission', role, perm, prefix, '--prefix'], endpoints);
  await ctl(['user', 'grant-role', user, role], endpoints);
}

/**
 * The application history the migration tests move between the reference and svc: `keys` keys app/<i>, a blob
 * larger than a page, the first `rewrites` keys rewritten, app/<deleted>* deleted, a compaction `back` revisions
 * below the head, "session" under a 2-hour lease, and user bob with role writer on app/. Returns the lease id.
 */
export async function appHistory(endpoints: string[], o: { keys: number; blobSeed: number; rewrites: number; deleted: string; back: number }): Promise<string> {
  for (let i = 0; i < o.keys; i++) await ctl(['put', `app/${i}`, `v${i}`], endpoints);
  await ctl(['put', 'blob', bigValue(60000, o.blobSeed)], endpoints);
  for (let i = 0; i < o.rewrites; i++) await ctl(['put', `app/${i}`, `v${i}-2`], endpoints);
  await ctl(['del', `app/${o.deleted}`, '--prefix'], endpoints);
  await compactBack(endpoints, o.back);
  const lease = await grantLease(endpoints, 7200);
  await ctl(['put', 'session', 'alive', `--lease=${lease}`], endpoints);
  await userWithRole(endpoints, 'bob', 'writer', 'readwrite', 'app/');
  return lease;
}

/** Every key of the cluster with its revisions and lease (etcdctl get "" --prefix -w json; uint64s kept exact). */
export async function keySpace(endpoint: string, env?: NodeJS.ProcessEnv): Promise<KeySpace> {
  const raw = await ctl(['get', '', '--prefix', '-w', 'json'], [endpoint], env);
  // JSON numbers lose precision past 2^53: quote lease ids before parsing
  const j = JSON.parse(raw.replace(/"lease":(\d+)/g, '"lease":"$1"')) as { header: { revision: number }; kvs?: Array<Record<string, unknown>> };
  const keys = new Map<string, KeyState>();
  for (const kv of j.kvs ?? []) {
    keys.set(kv.key as string, {
      value: (kv.value as string | undefined) ?? '',
      create_revision: kv.create_revision as number,
      mod_revision: kv.mod_revision as number,
      version: kv.version as number,
      lease: kv.lease ? BigInt(kv.lease as string).toString(16) : '0',
    });
  }
  return { revision: j.header.revision, keys };
}

/**
 * The live key space a reference-format file holds: the newest revision of every key in its `key` bucket, unless
 * that is a tombstone (a revision key of 18 bytes), in the shape keySpace() gives for a running cluster.
 */
export function latestKeys(file: BoltFile): Map<string, KeyState> {
  const keyBucket = file.buckets.find((b) => b.name.toString() === 'key');
  const latest = new Map<string, KeyState | undefined>();
  for (const { key, value } of keyBucket?.kvs ?? []) {
    const kv = decodeKv(fromReference('key', key, value)!);
    const state = { value: Buffer.from(kv.value).toString('base64'), create_revision: kv.createRevision, mod_revision: kv.modRevision, version: kv.version, lease: kv.lease.toString(16) };
    latest.set(Buffer.from(kv.key).toString('base64'), key.length === 18 ? undefined : state);
  }
  return new Map([...latest].filter((e): e is [string, KeyState] => e[1] !== undefined).sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'base64'), Buffer.from(b, 'base64'))));
}

/** Lease ids (hex) as `etcdctl lease list` prints them. */
export async function leaseIds(endpoint: string): Promise<string[]> {
  const out = await ctl(['lease', 'list'], [endpoint]);
  return out.split('\n').slice(1).map((l) => l.trim()).filter(Boolean).sort();
}

export interface RestoredCluster {
  endpoints: string[];
  processes: LoggedProcess[];
  stop(): Promise<void>;
}

async function specs(n: number, prefix: string) {
  const ports = await freePorts(2 * n);
  return Array.from({ length: n }, (_, i) => ({
    name: `${prefix}${i}`,
    client: `http://127.0.0.1:${ports[2 * i]}`,
    peer: `http://127.0.0.1:${ports[2 * i + 1]}`,
    endpoint: `127.0.0.1:${ports[2 * i]}`,
  }));
}

/**
 * Restores `snapshot` into n new members' data dirs under `dir` (`restore` runs one member's restore command with
 * the reference's restore flags), then starts them (`start` with the server flags) and waits for /health.
 */
export async function restoreAndStart(
  snapshot: string,
  dir: string,
  n: number,
  prefix: string,
  restore: (args: string[]) => Promise<void>,
  start: (name: string, flags: string[], logFile: string) => LoggedProcess,
): Promise<RestoredCluster> {
  const ms = await specs(n, prefix);
  const initial = ms.map((m) => `${m.name}=${m.peer}`).join(',');
  const token = `restored-${prefix}-${process.pid}`;
  const common = (m: (typeof ms)[number]) => [`--name=${m.name}`, `--data-dir=${join(dir, m.name)}`, `--initial-cluster=${initial}`, `--initial-advertise-peer-urls=${m.peer}`, `--initial-cluster-token=${token}`];
  for (const m of ms) await restore(['snapshot', 'restore', snapshot, ...common(m)]);
  const processes = ms.map((m) =>
    start(m.name, [...common(m), `--listen-client-urls=${m.client}`, `--advertise-client-urls=${m.client}`, `--listen-peer-urls=${m.peer}`], join(dir, `${m.name}.log`)),
  );
  const stop = async () => void (await Promise.all(processes.map((p) => p.stop('SIGKILL', 5000))));
  try {
    await Promise.all(ms.map((m, i) => waitForHttp(`${m.client}/health`, { timeoutMs: 60000, process: processes[i] })));
  } catch (e) {
    await stop();
    throw e;
  }
  return { endpoints: ms.map((m) => m.endpoint), processes, stop };
}

/** `etcdctl snapshot restore` into n new members, then the reference etcd on them. */
export function restoreIntoReference(snapshot: string, dir: string, n: number): Promise<RestoredCluster> {
  return restoreAndStart(snapshot, dir, n, 'ref', async (args) => void (await ctl(args)), (name, flags, logFile) => spawnLogged(ETCD_BIN, flags, { logFile, name }));
}

/** `svcctl snapshot restore` into n new members, then svc on them. */
export function restoreIntoSvc(snapshot: string, dir: string, n: number, version = '3.4.34'): Promise<RestoredCluster> {
  return restoreAndStart(
    snapshot,
    dir,
    n,
    'svc',
    async (args) => {
      const r = await svcctl(args);
      expect(r.code, r.err).to.equal(0);
    },
    (name, flags, logFile) => spawnSvc(flags, { logFile, name, version }),
  );
}

/** A value larger than a bbolt page (overflow pages), printable for etcdctl's command line. */
export function bigValue(n: number, seed: number): string {
  let s = '';
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += x.toString(36);
  }
  return s.slice(0, n);
}
