// `svc-operator local run [--state-dir DIR] [--listen HOST:PORT] [--dry-run]`: the local loop (orchestrator/local-loop.ts,
// the engine's passes) for as long as it runs, as the controller does on Kubernetes: it takes up a spec saved by
// `local apply`, starts a member whose process is gone, takes scheduled backups and drills when due, and serves
// /healthz and /metrics on loopback. One loop per state dir (the lock: runtime/local/lock.ts, cli/loop-lock.ts): `local apply` and the
// verbs that wait hand their spec over to a running `local run` and wait for it to settle; the others are refused.
// SIGTERM/SIGINT: the step under way is finished and recorded, the lock released, exit 0. After a SIGKILL the next
// `local run` takes the lock over and resumes from the record document.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { SvcClusterSpec } from '../api/types.js';
import { UpgradeMetrics } from '../controller/metrics.js';
import { newMemory, reconcile, runPass, type StepEvent } from '../orchestrator/index.js';
import { holderAlive, readLock, RUN_COMMAND, takeLock, type LocalRuntime } from '../runtime/local/index.js';
import { describeStep } from '../planner/steps.js';
import { CommandError, UsageError } from './args.js';
import { backupClient, localRuntime, loopReports, startsStopped, startStopped } from './local.js';
import { busy, holderText } from './loop-lock.js';
import { StepPrinter } from './printer.js';

/** The default of --listen: loopback, a free port the first log line names. */
export const DEFAULT_LISTEN = '127.0.0.1:0';

/** The metrics' namespace label of a local cluster (the controller's is the SvcCluster's namespace). */
const NAMESPACE = 'local';

/** A --listen value: loopback only. */
export function parseListen(v: string): { host: string; port: number } {
  const m = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) throw new UsageError(`--listen takes a loopback address and port (127.0.0.1:PORT, [::1]:PORT or localhost:PORT; port 0: any free one), not ${v}`);
  return { host: m[1] === '[::1]' ? '::1' : m[1], port: Number(m[2]) };
}

/** A log line: the time, then the text (step lines come from StepPrinter already stamped). */
class LogPrinter extends StepPrinter {
  override line(s: string): void {
    super.line(`${new Date().toISOString()} ${s}`);
  }
}

export interface LocalRunOptions {
  stateDir: string;
  listen: string;
  dryRun: boolean;
  /** Fault injection (SVC_OPERATOR_CRASH_AT), as `local apply`. */
  crashAt?: string;
  /** Stops the loop (the CLI: SIGTERM and SIGINT); default: those signals. */
  signal?: AbortSignal;
  out?: (s: string) => void;
}

/** `local run`: resolves with the exit code once stopped (refusals throw CommandError: exit 1). */
export async function localRun(o: LocalRunOptions): Promise<number> {
  const { host, port } = parseListen(o.listen);
  const write = o.out ?? ((s: string) => void process.stdout.write(s));
  const runtime = localRuntime(o.stateDir);
  const state = runtime.state();
  if (!state) throw new CommandError(`no local cluster in ${runtime.stateDir}; create one with \`svc-operator local apply -f <cluster.yaml> --state-dir ${o.stateDir}\`, then start local run`);
  if (o.dryRun) return dryRun(runtime, state.spec, write);
  const lock = takeLock(runtime.stateDir, RUN_COMMAND);
  if ('held' in lock) throw busy(runtime.stateDir, lock.held);
  const printer = new LogPrinter({ write });
  const registry = new Registry();
  const metrics = new UpgradeMetrics(registry);
  let stopping = false;
  let server: Server | undefined;
  const client = backupClient(state.spec);
  try {
    server = await listen(host, port, registry, () => stopping);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
    lock.update({ listen: url });
    printer.line(`svc-operator local run: looking after ${state.name} in ${runtime.stateDir} (pid ${process.pid}); /healthz and /metrics on ${url}`);
    if (lock.tookOver) printer.line(`took over the lock of ${holderText(lock.tookOver)}: that process is gone; resuming from the recorded steps`);
    const stop = new AbortController();
    const onSignal = (sig: string) => {
      if (stop.signal.aborted) return;
      printer.line(`${sig}: stopping once the step under way is finished and recorded`);
      stop.abort();
    };
    if (o.signal) o.signal.addEventListener('abort', () => onSignal('asked to stop'));
    else {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    const reports = loopReports(runtime, printer);
    const r = await reconcile(runtime, state.spec, {
      client,
      crashAt: o.crashAt,
      ...reports,
      onStep: (e: StepEvent) => {
        reports.onStep!(e);
        metrics.observe(NAMESPACE, state.name, e.step, e.progress);
        metrics.noSpace(NAMESPACE, state.name, (e.observed.noSpace ?? []).length > 0);
      },
      onActed: (step) => metrics.stepDone(NAMESPACE, state.name, step),
      onDefrag: (d) => {
        reports.onDefrag!(d);
        metrics.defragmented(NAMESPACE, state.name, d);
      },
      watch: {
        signal: stop.signal,
        spec: () => runtime.state()?.spec,
        beforePass: (spec) => startStopped(runtime, spec, printer),
        onSettled: (res, passAt) => {
          const now = runtime.state();
          metrics.backup(NAMESPACE, state.name, now?.backupFailure !== undefined);
          metrics.verified(NAMESPACE, state.name, now?.records.backups?.lastVerified);
          lock.update({ settled: { outcome: res.outcome, step: res.step, passAt, actions: res.actions, ...(res.error ? { error: res.error } : {}) } });
        },
      },
    });
    if (!o.signal) {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    if (r.error) {
      printer.line(`stopped: ${r.error}`);
      return 1;
    }
    printer.line(`stopped; released the lock of ${runtime.stateDir} (the next \`svc-operator local run\` or \`local apply\` carries on)`);
    return 0;
  } finally {
    stopping = true;
    client.close();
    lock.release();
    server?.close();
  }
}

/** Serves /healthz (200 ok while the loop runs, 503 once it stops) and /metrics on loopback. */
function listen(host: string, port: number, registry: Registry, stopping: () => boolean): Promise<Server> {
  const srv = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') res.writeHead(stopping() ? 503 : 200).end(stopping() ? 'stopping\n' : 'ok\n');
    else if (path === '/metrics') registry.metrics().then((text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text), () => res.writeHead(500).end());
    else res.writeHead(404).end('not found: /healthz or /metrics\n');
  });
  return new Promise((resolve, reject) => {
    srv.once('error', (e: NodeJS.ErrnoException) => reject(new CommandError(`cannot listen on ${host}:${port}: ${e.code === 'EADDRINUSE' ? 'the port is in use' : e.message}; name another with --listen 127.0.0.1:PORT (port 0: any free one)`)));
    srv.listen(port, host, () => resolve(srv));
  });
}

/** `local run --dry-run`: what the first pass would do, nothing recorded or carried out. */
async function dryRun(runtime: LocalRuntime, spec: SvcClusterSpec, write: (s: string) => void): Promise<number> {
  const state = runtime.state()!;
  const held = readLock(runtime.stateDir);
  const lines: string[] = [];
  if (held && holderAlive(held)) lines.push(`(now reconciled by ${holderText(held)}: a local run started now would be refused)`);
  const stopped = startsStopped(state, spec) ? (await runtime.members()).filter((m) => !m.running && !m.lost).map((m) => m.name) : [];
  if (stopped.length > 0) lines.push(`start the stopped member(s) ${stopped.join(', ')} (their data kept)`);
  const client = backupClient(spec);
  try {
    const r = await runPass(runtime, spec, client, newMemory(), { dryRun: true });
    lines.push(`${r.step.kind}: ${describeStep(r.step)}`);
  } finally {
    client.close();
  }
  write(`dry run: the first pass of local run over ${state.name} in ${runtime.stateDir} would:\n${lines.map((l) => `  ${l}\n`).join('')}nothing was changed\n`);
  return 0;
}
