// Helpers shared by the release tests: /version polling, single-member processes started with arbitrary
// flags (TLS, config files, flags a release refuses), log inspection that works for both the capnslog text
// format and zap JSON lines, a retrying writer for the rolling upgrade, and a gRPC call helper.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../../server/wire/index.js';
import { freePorts } from '../../../harness/ports.js';
import { HarnessError } from '../../../harness/errors.js';
import { httpGet, sleep, type ExitStatus, type LoggedProcess } from '../../../harness/process.js';
import { b64, postJson, spawnSvc, type SvcCluster } from '../../../harness/svc-cluster.js';

export const V33 = '3.3.27';
export const V34 = '3.4.34';
export const V35 = '3.5.21';

export interface VersionAnswer {
  etcdserver: string;
  etcdcluster: string;
}

/** GET /version of a client URL, parsed. */
export async function getVersion(clientURL: string): Promise<VersionAnswer> {
  const res = await httpGet(`${clientURL}/version`);
  if (res.status !== 200) throw new HarnessError('BAD_ANSWER', `${clientURL}/version: HTTP ${res.status} ${res.body}`);
  return JSON.parse(res.body) as VersionAnswer;
}

/** /version of every running member, keyed by member index. */
export async function versionsOf(c: SvcCluster): Promise<Map<number, VersionAnswer>> {
  const out = new Map<number, VersionAnswer>();
  for (const i of c.running()) out.set(i, await getVersion(c.members[i].clientURL));
  return out;
}

/** Waits until every running member's /version reports `cluster` as etcdcluster; returns the last answers. */
export async function waitClusterVersion(c: SvcCluster, cluster: string, timeoutMs = 40000): Promise<Map<number, VersionAnswer>> {
  const deadline = Date.now() + timeoutMs;
  let last = new Map<number, VersionAnswer>();
  for (;;) {
    try {
      last = await versionsOf(c);
      if ([...last.values()].every((v) => v.etcdcluster === cluster)) return last;
    } catch {
      // a member between restarts; try again
    }
    if (Date.now() > deadline) {
      throw new HarnessError('TIMEOUT', `cluster version not ${cluster} within ${timeoutMs} ms: ${JSON.stringify([...last.entries()])}`);
    }
    await sleep(300);
  }
}

/** Log lines (text or JSON) of `log` whose text matches `pattern`. */
export function linesMatching(log: string, pattern: RegExp): string[] {
  return log.split('\n').filter((l) => pattern.test(l));
}

/** Node's own process warnings (`(node:123) Warning: ...`) are not the product's log records. */
export const NODE_WARNING = /^\(node:\d+\) /;

/** Every line of `log` is a zap JSON record with level, ts, caller and msg (marker lines of the test harness excepted). */
export function zapRecords(log: string): Array<Record<string, unknown>> {
  return log
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('=== svc start') && !NODE_WARNING.test(l))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** capnslog line shape: `2006-01-02 15:04:05.000000 I | pkg: message`. */
export const CAPNSLOG_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} [DINWECP] \| [\w/.-]+: /;

export interface RawMember {
  dir: string;
  name: string;
  clientURL: string;
  peerURL: string;
  logFile: string;
  process: LoggedProcess;
  /** Kill (if running) and remove the temp dir. */
  close(): Promise<void>;
}

export interface RawMemberOptions {
  version: string;
  /** Flags after --name/--data-dir (and the URL flags unless noUrls). */
  args?: readonly string[];
  /** Client and peer URL schemes. Default http. */
  clientScheme?: 'http' | 'https';
  peerScheme?: 'http' | 'https';
  /** Leave out every URL flag (a config file gives them). */
  noUrls?: boolean;
  /** Use this temp dir instead of a fresh one. */
  dir?: string;
  /** Write this YAML (given the member's names and URLs) to <dir>/svc.yaml and pass --config-file instead of any URL flag. */
  configYaml?: (m: { name: string; dataDir: string; clientURL: string; peerURL: string }) => string;
}

/** A one-member cluster started directly (for flags the cluster helper cannot express, e.g. https URLs). */
export async function startRawMember(o: RawMemberOptions): Promise<RawMember> {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'svc-rel-'));
  const [cp, pp] = await freePorts(2);
  const name = 'solo';
  const clientURL = `${o.clientScheme ?? 'http'}://127.0.0.1:${cp}`;
  const peerURL = `${o.peerScheme ?? 'http'}://127.0.0.1:${pp}`;
  const dataDir = join(dir, 'data');
  if (o.configYaml) {
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, o.configYaml({ name, dataDir, clientURL, peerURL }));
    o = { ...o, noUrls: true, args: [...(o.args ?? []), `--config-file=${file}`] };
  }
  const urls = o.noUrls
    ? []
    : [
        `--listen-client-urls=${clientURL}`,
        `--advertise-client-urls=${clientURL}`,
        `--listen-peer-urls=${peerURL}`,
        `--initial-advertise-peer-urls=${peerURL}`,
        `--initial-cluster=${name}=${peerURL}`,
      ];
  const args = [...(o.configYaml ? [] : [`--name=${name}`, `--data-dir=${dataDir}`]), ...urls, ...(o.args ?? [])];
  const logFile = join(dir, 'svc.log');
  const proc = spawnSvc(args, { logFile, name: `svc ${o.version}`, version: o.version });
  return {
    dir,
    name,
    clientURL,
    peerURL,
    logFile,
    process: proc,
    async close() {
      await proc.stop('SIGKILL', 5000);
      if (process.env.SVC_TEST_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for a process to exit (it is expected to refuse to start); kills it after timeoutMs. */
export async function expectExit(p: LoggedProcess, timeoutMs = 30000): Promise<ExitStatus> {
  const timer = setTimeout(() => void p.stop('SIGKILL', 1000), timeoutMs);
  const st = await p.exited;
  clearTimeout(timer);
  return st;
}

/** Opens a TCP connection, sends half a request and resets it: the server sees a connection error. */
export function resetConnection(clientURL: string): Promise<void> {
  const u = new URL(clientURL);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write('GET /version HTTP/1.1\r\nHost: x\r\n');
      setTimeout(() => {
        s.resetAndDestroy();
        resolve();
      }, 50);
    });
    s.on('error', () => resolve());
  });
}

export interface WriterStats {
  /** Writes acknowledged (after retries). */
  acked: number;
  /** Writes given up on after every retry: what the spec says must stay 0. */
  failed: number;
  /** Attempts that failed and were retried. */
  retries: number;
  /** Keys acknowledged, to read back afterwards. */
  keys: string[];
  errors: string[];
}

export interface Writer {
  stats: WriterStats;
  /** Stops after the current write and resolves with the stats. */
  stop(): Promise<WriterStats>;
}

/**
 * A client that retries: puts `<prefix><n>` one after another through the gateway of any running member;
 * a failed attempt is retried (on the next member) for up to retryForMs before the write counts as failed.
 */
export function startWriter(c: SvcCluster, prefix: string, retryForMs = 30000): Writer {
  const stats: WriterStats = { acked: 0, failed: 0, retries: 0, keys: [], errors: [] };
  let stopping = false;
  let n = 0;
  let rr = 0;
  const loop = (async () => {
    while (!stopping) {
      const key = `${prefix}${String(n++).padStart(5, '0')}`;
      const deadline = Date.now() + retryForMs;
      for (;;) {
        const running = c.running();
        const i = running.length ? running[rr++ % running.length] : 0;
        try {
          const a = await postJson(`${c.members[i].clientURL}/v3/kv/put`, { key: b64(key), value: b64(`v-${key}`) }, 5000);
          if (a.status === 200) {
            stats.acked++;
            stats.keys.push(key);
            break;
          }
          throw new Error(`HTTP ${a.status} ${a.text.slice(0, 200)}`);
        } catch (e) {
          if (Date.now() > deadline) {
            stats.failed++;
            stats.errors.push(`${key}: ${(e as Error).message}`);
            break;
          }
          stats.retries++;
          await sleep(200);
        }
      }
      await sleep(50);
    }
  })();
  return {
    stats,
    async stop() {
      stopping = true;
      await loop;
      return stats;
    },
  };
}

/** Calls a unary gRPC method on a client URL (plain text) and resolves with the answer or the gRPC error. */
export function grpcCall(
  clientURL: string,
  service: 'Auth' | 'Maintenance',
  method: string,
  req: Record<string, unknown>,
  timeoutMs = 10000,
): Promise<{ ok: true; answer: Record<string, unknown> } | { ok: false; code: number; details: string }> {
  const Ctor = loadClients()[service];
  const client = new Ctor(clientURL.replace(/^https?:\/\//, ''), grpc.credentials.createInsecure()) as unknown as grpc.Client &
    Record<string, (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void>;
  return new Promise((resolve) => {
    client[method](req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
      client.close();
      if (err) resolve({ ok: false, code: err.code, details: err.details });
      else resolve({ ok: true, answer: res });
    });
  });
}
