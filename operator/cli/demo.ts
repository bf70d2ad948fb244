// `svc-operator demo` (what `npm start` runs): a 3-member 3.3.27 cluster on this machine looked after by `local run`
// (in this process), sample data, a background writer, a member SIGKILLed that local run starts again by itself,
// then the upgrade to 3.4.34 and to 3.5.21 handed over to it as `local apply` does, a final report, a check of every
// key, and cleanup.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../server/client/index.js';
import { API_VERSION, KIND, type SvcCluster } from '../api/types.js';
import { withDefaults } from '../api/validate.js';
import { MemberClient } from '../members/index.js';
import { LocalRuntime } from '../runtime/local/index.js';
import { BackgroundWriter } from '../workload/writer.js';
import { LeaderTracker } from '../workload/leader-tracker.js';
import { applyCluster, envSvcEntry } from './local.js';
import { DEFAULT_LISTEN, localRun } from './local-run.js';
import { StepPrinter } from './printer.js';

export interface DemoOptions {
  stateDir?: string;
  /** Keep the cluster and its files at the end. */
  keep?: boolean;
  svcEntry?: string;
}

const SAMPLE_KEYS = 100;

/** Runs the demo; resolves with the exit code. */
export async function demo(opts: DemoOptions = {}): Promise<number> {
  const started = Date.now();
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'svc-demo-'));
  const printer = new StepPrinter();
  const say = (s: string) => printer.line(s);
  const svcEntry = opts.svcEntry ?? envSvcEntry();
  const crashAt = process.env.SVC_OPERATOR_CRASH_AT;
  const runtime = new LocalRuntime({ stateDir, name: 'demo', svcEntry });
  const cluster: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'demo' }, spec: withDefaults({ version: '3.3.27', replicas: 3 }) };
  let writer: BackgroundWriter | undefined;
  let tracker: LeaderTracker | undefined;
  let ok = true;
  const stopRun = new AbortController();
  let running: Promise<number> | undefined;
  try {
    say(`== svc-operator demo: 3 members of 3.3.27, then 3.3 -> 3.4.34 -> 3.5.21 (state in ${stateDir})`);
    const created = await applyCluster(cluster, { stateDir, printer, svcEntry, crashAt });
    if (created.outcome !== 'steady') throw new Error(`cluster not created: ${created.error ?? created.step.kind}`);
    // from here on local run looks after the cluster; its log lines are marked "local run |"
    running = localRun({ stateDir, listen: DEFAULT_LISTEN, dryRun: false, crashAt, signal: stopRun.signal, out: (t) => t.split('\n').filter(Boolean).forEach((l) => say(`local run | ${l}`)) });
    const urls = async () => new Map((await runtime.members()).map((m) => [m.name, m.clientURL]));
    const endpoints = [...(await urls()).values()];

    say(`== writing ${SAMPLE_KEYS} sample keys`);
    const c = await Client.connect({ endpoints, commandTimeoutMs: 5000 });
    const sample = new Map<string, string>();
    for (let i = 0; i < SAMPLE_KEYS; i++) {
      const k = `sample/${String(i).padStart(3, '0')}`;
      await c.put(k, `value-${i}`);
      sample.set(k, `value-${i}`);
    }
    writer = new BackgroundWriter({ endpoints });
    await writer.start();
    tracker = new LeaderTracker(urls);
    tracker.start();
    say('== background writer started (puts with retries through the client library)');

    const victim = runtime.state()!.members.find((m) => m.name === 'demo-1')!;
    say(`== SIGKILL of demo-1 (pid ${victim.pid}): local run starts it again by itself`);
    const killedAt = Date.now();
    process.kill(victim.pid!, 'SIGKILL');
    await backAgain(runtime, 'demo-1', victim.pid!);
    say(`== demo-1 is back and healthy after ${((Date.now() - killedAt) / 1000).toFixed(1)} s, no command run`);

    const changesPer: Record<string, number> = {};
    for (const to of ['3.4.34', '3.5.21']) {
      say(`== upgrade to ${to}`);
      const before = tracker.changes;
      const t0 = Date.now();
      // handed over to local run (its lines show the steps)
      const r = await applyCluster({ ...cluster, spec: { ...cluster.spec, version: to } }, { stateDir, svcEntry });
      if (r.outcome !== 'steady') throw new Error(`upgrade to ${to} ended ${r.outcome}: ${r.error ?? JSON.stringify(r.step)}`);
      await new Promise((res) => setTimeout(res, 500));
      changesPer[to] = tracker.changes - before;
      say(`== upgrade to ${to} done in ${((Date.now() - t0) / 1000).toFixed(1)} s; leader changes: ${changesPer[to]}`);
    }
    const ws = await writer.stop();
    writer = undefined;
    await tracker.stop();

    say('== every member\'s GET /version');
    const mc = new MemberClient();
    const rows = [['MEMBER', 'ENDPOINT', 'etcdserver', 'etcdcluster']];
    for (const [name, url] of await urls()) {
      const v = await mc.version(url);
      rows.push([name, url, v.etcdserver, v.etcdcluster]);
      if (v.etcdserver !== '3.5.21' || !v.etcdcluster.startsWith('3.5.')) ok = false;
    }
    mc.close();
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) say(`  ${r.map((x, i) => x.padEnd(widths[i])).join('  ')}`);

    say('== snapshots taken before each upgrade');
    for (const s of runtime.state()?.records.progress ? await snapshotsOf(runtime) : []) say(`  ${s}`);

    say(`== writes attempted ${ws.attempted}, failed ${ws.failed} (retries ${ws.retries}); leader changes ${tracker.changes} (${Object.entries(changesPer).map(([k, v]) => `${v} during -> ${k}`).join(', ')}); leaders seen ${tracker.history.join(' -> ')}`);
    if (ws.failed > 0) ok = false;

    const expected = new Map([...sample, ...ws.written]);
    let missing = 0;
    const got = new Map<string, string>();
    for (const prefix of ['sample/', 'writer/']) {
      const r = await c.get(prefix, { prefix: true });
      for (const kv of r.kvs) got.set(kv.key.toString(), kv.value.toString());
    }
    for (const [k, v] of expected) if (got.get(k) !== v) missing++;
    c.close();
    say(`== verified ${expected.size} keys: ${missing === 0 ? 'all present with their values' : `${missing} missing or wrong`}`);
    if (missing > 0) ok = false;
  } catch (e) {
    ok = false;
    say(`demo failed: ${(e as Error).message}`);
  } finally {
    if (writer) await writer.stop().catch(() => undefined);
    if (tracker) await tracker.stop().catch(() => undefined);
    stopRun.abort();
    if (running && (await running.catch(() => 1)) !== 0) ok = false;
    if (opts.keep) say(`== kept the cluster in ${stateDir} (svc-operator local status --state-dir ${stateDir})`);
    else {
      await runtime.delete();
      say('== cleaned up');
    }
  }
  say(`== demo ${ok ? 'succeeded' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ok ? 0 : 1;
}

/** Waits (up to a minute) until member `name` runs under a new pid and reports healthy. */
async function backAgain(runtime: LocalRuntime, name: string, oldPid: number): Promise<void> {
  const mc = new MemberClient({ timeoutMs: 1000, attempts: 1 });
  try {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const m = (await runtime.members()).find((x) => x.name === name);
      const pid = runtime.state()?.members.find((x) => x.name === name)?.pid;
      if (m?.running && pid !== oldPid && (await mc.healthy(m.clientURL).catch(() => false))) return;
    }
    throw new Error(`${name} did not come back within a minute`);
  } finally {
    mc.close();
  }
}

async function snapshotsOf(runtime: LocalRuntime): Promise<string[]> {
  const { readdirSync, statSync } = await import('node:fs');
  const dir = join(runtime.stateDir, 'snapshots');
  return readdirSync(dir).filter((f) => f.endsWith('.db')).sort().map((f) => `${join(dir, f)} (${statSync(join(dir, f)).size} bytes, ends with its sha256)`);
}
