// The checks after a chaos run, apart from linearizability: every acknowledged write is in the store at
// the revision it was acknowledged with; every member's HashKV agrees at one revision; no member died
// except by our hand, and no log shows a stack trace or an uncaught error.

import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../server/wire/index.js';
import { sleep } from '../process.js';
import type { ChaosCluster } from './cluster.js';
import { describeOp, type Operation } from './history.js';
import type { ChaosKvClient } from './kv-client.js';

export interface LostWriteReport {
  checked: number;
  /** Compacted away before we could look: neither confirmed nor lost. */
  compacted: number;
  lost: string[];
}

/** Every ok put and succeeded cas must read back, at its header revision, as its value with that mod revision. */
export async function checkAcknowledgedWrites(history: readonly Operation[], conn: ChaosKvClient): Promise<LostWriteReport> {
  const acked = history.filter(
    (o) => o.outcome === 'ok' && o.revision && (o.input.kind === 'put' || (o.input.kind === 'cas' && o.output?.kind === 'cas' && o.output.succeeded)),
  );
  const out: LostWriteReport = { checked: 0, compacted: 0, lost: [] };
  for (let i = 0; i < acked.length; i += 16) {
    await Promise.all(
      acked.slice(i, i + 16).map(async (o) => {
        const want = (o.input as { value: string }).value;
        try {
          const got = await conn.getAt(o.input.key, o.revision!);
          out.checked++;
          if (got.value !== want || got.modRevision !== o.revision) {
            out.lost.push(`#${o.id} ${describeOp(o)} at revision ${o.revision}: the store has ${got.value === null ? 'nothing' : JSON.stringify(got.value)} (mod revision ${got.modRevision})`);
          }
        } catch (e) {
          if (/compacted/.test((e as Error).message)) out.compacted++;
          else out.lost.push(`#${o.id} ${describeOp(o)}: cannot read back at revision ${o.revision}: ${(e as Error).message}`);
        }
      }),
    );
  }
  return out;
}

type Unary = (req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void;

/** HashKV of every running member at `revision`, retried while a member has not applied it yet. Returns problems found. */
export async function checkHashes(cluster: ChaosCluster, revision: number, timeoutMs = 20000): Promise<{ problems: string[]; hashes: string[] }> {
  const { Maintenance } = loadClients();
  const deadline = Date.now() + timeoutMs;
  const answers = new Map<number, string>();
  let lastErr = '';
  for (;;) {
    for (const i of cluster.running()) {
      if (answers.has(i)) continue;
      const c = new Maintenance(cluster.members[i].endpoint, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Unary>;
      try {
        const r = await new Promise<Record<string, unknown>>((resolve, reject) =>
          c.HashKV.call(c, { revision: String(revision) }, { deadline: Date.now() + 5000 }, (err, res) => (err ? reject(err) : resolve(res))),
        );
        answers.set(i, `hash=${r.hash} compact_revision=${r.compact_revision}`);
      } catch (e) {
        lastErr = `${cluster.members[i].name}: ${(e as Error).message}`;
      } finally {
        c.close();
      }
    }
    if (answers.size === cluster.running().length || Date.now() > deadline) break;
    await sleep(300);
  }
  const hashes = cluster.running().map((i) => `${cluster.members[i].name} ${answers.get(i) ?? `no answer (${lastErr})`}`);
  const distinct = new Set(answers.values());
  const problems: string[] = [];
  if (answers.size !== cluster.running().length) problems.push(`HashKV at revision ${revision}: not every member answered: ${hashes.join('; ')}`);
  else if (distinct.size > 1) problems.push(`HashKV at revision ${revision} differs between members: ${hashes.join('; ')}`);
  return { problems, hashes };
}

/** Log lines that mean something blew up inside a member. */
const CRASH_PATTERNS = [
  /^\s+at .+:\d+:\d+\)?\s*$/, // a JavaScript stack frame
  /Uncaught|UnhandledPromiseRejection|unhandledRejection|FATAL ERROR|JavaScript heap out of memory|Segmentation fault|\bpanic\b/i,
];

/** The crash-looking lines of a log text. */
export function crashLines(text: string): string[] {
  return text.split('\n').filter((l) => CRASH_PATTERNS.some((p) => p.test(l)));
}

/** Exits we did not cause, and crash-looking log lines (at most a few per member). */
export function checkCrashes(cluster: ChaosCluster): string[] {
  const out: string[] = [];
  for (const m of cluster.members) {
    out.push(...m.crashes);
    const lines = crashLines(cluster.log(m.index));
    if (lines.length) out.push(`${m.name} log shows ${lines.length} crash-looking line(s), e.g.:\n    ${lines.slice(0, 4).join('\n    ')}`);
  }
  return out;
}

/** Per key, the values the store ever held (from a Watch over the whole history), or undefined when compacted. */
export async function storeHistoryValues(endpoint: string, keyFrom: string, keyTo: string, upTo: number, timeoutMs = 20000): Promise<Map<string, Set<string>> | undefined> {
  if (upTo <= 0) return new Map();
  const { Watch } = loadClients();
  const client = new Watch(endpoint, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, (opts: grpc.CallOptions) => grpc.ClientDuplexStream<unknown, Record<string, unknown>>>;
  const out = new Map<string, Set<string>>();
  try {
    return await new Promise<Map<string, Set<string>> | undefined>((resolve, reject) => {
      const stream = client.Watch.call(client, { deadline: Date.now() + timeoutMs });
      // History events come at once after creation; a quiet second means we have them all.
      let idle: NodeJS.Timeout | undefined;
      const quiet = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          stream.cancel();
          resolve(out);
        }, 1000);
      };
      stream.on('data', (res: Record<string, unknown>) => {
        quiet();
        if (Number(res.compact_revision ?? 0) > 0 || res.canceled) {
          stream.cancel();
          return resolve(undefined);
        }
        for (const ev of (res.events as Array<{ type: string; kv: { key: Buffer; value: Buffer; mod_revision: string } }>) ?? []) {
          const key = Buffer.from(ev.kv.key).toString('utf8');
          if (ev.type === 'PUT') {
            const set = out.get(key) ?? new Set<string>();
            set.add(Buffer.from(ev.kv.value).toString('utf8'));
            out.set(key, set);
          }
          if (Number(ev.kv.mod_revision) >= upTo) {
            clearTimeout(idle);
            stream.cancel();
            return resolve(out);
          }
        }
      });
      stream.on('error', (e: grpc.ServiceError) => {
        clearTimeout(idle);
        if (e.code !== grpc.status.CANCELLED) reject(e);
      });
      stream.write({ create_request: { key: Buffer.from(keyFrom), range_end: Buffer.from(keyTo), start_revision: '1' } });
    });
  } finally {
    client.close();
  }
}
