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
