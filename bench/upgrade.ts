// Upgrade bench: the planner's ordered rolling upgrade (snapshot, followers first, leadership moved, the
// leader last, health and catch-up between members) against a naive restart of the members in ordinal
// order (each one restarted as soon as the previous one answers /health), on two identical fresh 3-member
// 3.3.27 clusters upgraded to 3.4.34 in the same run, each under the same background writer (puts with
// retries). Figures: wall time, leader changes, failed and retried writes.
// Standalone: node dist/bench/upgrade.js
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { API_VERSION, KIND, type SvcCluster } from '../operator/api/types.js';
import { withDefaults } from '../operator/api/validate.js';
import { applyCluster } from '../operator/cli/local.js';
import { MemberClient } from '../operator/members/index.js';
import { LocalRuntime } from '../operator/runtime/local/index.js';
import { BackgroundWriter } from '../operator/workload/writer.js';
import { LeaderTracker } from '../operator/workload/leader-tracker.js';

const FROM = '3.3.27';
const TO = '3.4.34';

export interface BenchUpgradeOptions {
  /** Compiled svc.js to run (default: the one next to this build). */
  svcEntry?: string;
}

interface RunFigures {
  wallMs: number;
  leaderChanges: number;
  failedWrites: number;
  retriedWrites: number;
  attemptedWrites: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withCluster(tag: string, opts: BenchUpgradeOptions, body: (rt: LocalRuntime, stateDir: string) => Promise<void>): Promise<RunFigures> {
  const stateDir = mkdtempSync(join(tmpdir(), `svc-bench-upgrade-${tag}-`));
  const rt = new LocalRuntime({ stateDir, name: tag, svcEntry: opts.svcEntry });
  const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: tag }, spec: withDefaults({ version: FROM, replicas: 3 }) };
  try {
    const created = await applyCluster(cluster, { stateDir, svcEntry: opts.svcEntry });
    if (created.outcome !== 'steady') throw new Error(`bench cluster ${tag} not created: ${created.error ?? created.step.kind}`);
    const members = async () => new Map((await rt.members()).map((m) => [m.name, m.clientURL]));
    const writer = new BackgroundWriter({ endpoints: [...(await members()).values()], intervalMs: 10 });
    await writer.start();
    const tracker = new LeaderTracker(members, 100);
    tracker.start();
    await sleep(500);
    const t0 = Date.now();
    await body(rt, stateDir);
    const wallMs = Date.now() - t0;
    await sleep(500);
    const stats = await writer.stop();
    await tracker.stop();
    return { wallMs, leaderChanges: tracker.changes, failedWrites: stats.failed, retriedWrites: stats.retries, attemptedWrites: stats.attempted };
  } finally {
    await rt.delete().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Waits until every member reports `version` as its release and the cluster version's minor. */
async function waitUpgraded(rt: LocalRuntime, version: string): Promise<void> {
  const mc = new MemberClient({ timeoutMs: 1000, attempts: 1 });
  const minor = version.split('.').slice(0, 2).join('.');
  try {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(100)) {
      const vs = await Promise.all((await rt.members()).map((m) => mc.version(m.clientURL).catch(() => undefined)));
      if (vs.every((v) => v?.etcdserver === version && v.etcdcluster.startsWith(`${minor}.`))) return;
    }
    throw new Error(`cluster did not reach ${version}`);
  } finally {
    mc.close();
  }
}

/** Ordered (planner) vs naive ordinal restart upgrade of a 3-member cluster, 3.3.27 -> 3.4.34. */
export async function benchUpgrade(opts: BenchUpgradeOptions = {}): Promise<Record<string, number>> {
  const ordered = await withCluster('ordered', opts, async (_rt, stateDir) => {
    const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'ordered' }, spec: withDefaults({ version: TO, replicas: 3 }) };
    const r = await applyCluster(cluster, { stateDir, svcEntry: opts.svcEntry });
    if (r.outcome !== 'steady') throw new Error(`ordered upgrade ended ${r.outcome}: ${r.error ?? r.step.kind}`);
  });
  const naive = await withCluster('naive', opts, async (rt) => {
    const mc = new MemberClient({ timeoutMs: 1000, attempts: 1 });
    try {
      for (const m of await rt.members()) {
        await rt.restartMember(m.name, TO);
        while (!(await mc.healthy(m.clientURL))) await sleep(100);
      }
    } finally {
      mc.close();
    }
    await waitUpgraded(rt, TO);
  });
  return {
    'upgrade.ordered.wall_ms': ordered.wallMs,
    'upgrade.ordered.leader_changes': ordered.leaderChanges,
    'upgrade.ordered.failed_writes': ordered.failedWrites,
    'upgrade.ordered.retried_writes': ordered.retriedWrites,
    'upgrade.ordered.attempted_writes': ordered.attemptedWrites,
    'upgrade.naive.wall_ms': naive.wallMs,
    'upgrade.naive.leader_changes': naive.leaderChanges,
    'upgrade.naive.failed_writes': naive.failedWrites,
    'upgrade.naive.retried_writes': naive.retriedWrites,
    'upgrade.naive.attempted_writes': naive.attemptedWrites,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchUpgrade().then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (e: Error) => {
      process.stderr.write(`bench/upgrade: ${e.stack ?? e.message}\n`);
      process.exitCode = 1;
    },
  );
}
