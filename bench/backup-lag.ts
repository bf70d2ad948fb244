// `npm run bench -- backup-lag`: continuous backup's recovery point. A 3-member local cluster with
// spec.backup.continuous (the local runtime runs `svc-operator backup-agent` beside it, as `local apply` does) and a
// real S3-compatible store (versitygw on loopback); a steady writer puts one key after another and notes when each
// revision was acknowledged; a poller lists the bucket's delta segments every --poll ms and notes when a segment
// covering each revision is there. The lag of a revision = (first listing that shows it covered) - (its
// acknowledgement): how far the newest restorable revision is behind the cluster. Goal: never more than 5 s.
//
// Flags (after `npm run bench -- backup-lag`):
//   --duration=<ms>         measured window (default 60000), after --warmup=<ms> (default 5000: the agent's first full snapshot)
//   --segment-seconds=<s>   the agent's segment interval (default 2, the agent's default)
//   --rate=<n>              the writer's puts per second (default 100)
//   --poll=<ms>             how often the bucket is listed (default 100; the lag is measured to within this)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { startS3Server } from '../harness/s3-server.js';
import { Client } from '../server/client/index.js';
import { applyCluster } from '../operator/cli/local.js';
import { LocalRuntime } from '../operator/runtime/local/index.js';
import { listSegments, S3Store } from '../operator/backup/destinations/index.js';
import { API_VERSION, KIND } from '../operator/api/types.js';
import { quantile } from './lib/stats.js';

export interface BackupLagOptions {
  durationMs: number;
  warmupMs: number;
  segmentSeconds: number;
  rate: number;
  pollMs: number;
}

export function parseBackupLagArgs(argv: readonly string[]): BackupLagOptions {
  const o: BackupLagOptions = { durationMs: 60_000, warmupMs: 5000, segmentSeconds: 2, rate: 100, pollMs: 100 };
  const keys: Record<string, keyof BackupLagOptions> = { duration: 'durationMs', warmup: 'warmupMs', 'segment-seconds': 'segmentSeconds', rate: 'rate', poll: 'pollMs' };
  for (const a of argv) {
    const m = /^--([\w-]+)=(.+)$/.exec(a);
    const k = m && keys[m[1]];
    if (!m || !k || !(Number(m[2]) > 0)) throw new Error(`backup-lag: unknown flag or bad value ${a} (flags: ${Object.keys(keys).map((x) => `--${x}=<n>`).join(' ')})`);
    o[k] = Number(m[2]);
  }
  return o;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the bench; resolves with the exit code. */
export async function benchBackupLag(argv: readonly string[]): Promise<number> {
  let o: BackupLagOptions;
  try {
    o = parseBackupLagArgs(argv);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-lag-'));
  const s3 = await startS3Server({ buckets: ['lag'] });
  const stateDir = join(dir, 'state');
  const runtime = new LocalRuntime({ stateDir });
  // the operator's environment, as `svc-operator local apply` would have it (the agent inherits it)
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  process.env.SVC_AGENT_SEGMENT_SECONDS = String(o.segmentSeconds);
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const load0 = loadavg();
  let client: Client | undefined;
  const store = new S3Store({ name: 'lag', spec: { bucket: 'lag', endpoint: s3.endpoint, forcePathStyle: true }, credentials: s3 });
  try {
    console.log(`backup-lag: 3-member local cluster, continuous backup to versitygw, writer ${o.rate} puts/s, segments every ${o.segmentSeconds} s, listing every ${o.pollMs} ms; ${cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}`);
    const r = await applyCluster({
      apiVersion: API_VERSION, kind: KIND, metadata: { name: 'lag' },
      spec: { version: '3.5.21', replicas: 3, backup: { continuous: true, destinations: [{ name: 'bench', s3: { bucket: 'lag', endpoint: s3.endpoint, forcePathStyle: true, region: 'us-east-1' } }] } },
    }, { stateDir });
    if (r.outcome !== 'steady') throw new Error(`the cluster did not come up: ${r.error ?? r.outcome}`);
    client = await Client.connect({ endpoints: runtime.state()!.members.map((m) => `http://127.0.0.1:${m.clientPort}`) });
    const acked: Array<{ revision: number; at: number }> = [];
    let writing = true;
    const writer = (async () => {
      const gap = 1000 / o.rate;
      let next = Date.now();
      for (let i = 0; writing; i++) {
        const res = await client!.put(`bench/${i % 1000}`, `v${i}`);
        acked.push({ revision: Number(res.header.revision), at: Date.now() });
        next += gap;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    })();
    // the poller: the newest revision covered by a segment in the bucket, as listings show it
    const lags: number[] = [];
    let covered = 0;
    let idx = 0;
    let measuring = false;
    const start = Date.now();
    let measureFrom = Number.POSITIVE_INFINITY;
    while (Date.now() - start < o.warmupMs + o.durationMs) {
      const segments = await listSegments({ name: 'lag', store }, 'lag'); // lag/delta/
      const now = Date.now();
      for (const s of segments) covered = Math.max(covered, s.toRevision);
      if (!measuring && Date.now() - start >= o.warmupMs && covered > 0) {
        measuring = true;
        measureFrom = now;
        // revisions acknowledged before the window are not counted
        while (idx < acked.length && acked[idx].at < measureFrom) idx++;
      }
      if (measuring) while (idx < acked.length && acked[idx].revision <= covered) lags.push(now - acked[idx++].at);
      await sleep(o.pollMs);
    }
    writing = false;
    await writer;
    // revisions acknowledged in the window and not covered by its end count with the lag they had reached
    const end = Date.now();
    const uncovered = acked.slice(idx).filter((a) => a.at >= measureFrom);
    for (const a of uncovered) lags.push(end - a.at);
    const sorted = [...lags].sort((a, b) => a - b);
    const load1 = loadavg();
    const fmt = (v: number) => `${(v / 1000).toFixed(2)} s`;
    console.log(`revisions measured: ${sorted.length} (${uncovered.length} not covered at the end of the window)`);
    console.log(`lag of the newest restorable revision behind acknowledged writes: p50 ${fmt(quantile(sorted, 0.5))}, p99 ${fmt(quantile(sorted, 0.99))}, max ${fmt(sorted.at(-1) ?? 0)}; goal 5 s: ${(sorted.at(-1) ?? Infinity) <= 5000 ? 'met' : 'NOT met'}`);
    console.log(`load average at the end: ${load1.map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`\nmarkdown:\n\n| segment interval | writer | revisions | p50 | p99 | max | load average (start / end) |\n|---|---|---|---|---|---|---|\n| ${o.segmentSeconds} s | ${o.rate} puts/s | ${sorted.length} | ${fmt(quantile(sorted, 0.5))} | ${fmt(quantile(sorted, 0.99))} | ${fmt(sorted.at(-1) ?? 0)} | ${load0[0].toFixed(2)} / ${load1[0].toFixed(2)} |`);
    return 0;
  } finally {
    client?.close();
    store.close();
    await runtime.delete().catch(() => undefined);
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
