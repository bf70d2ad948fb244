// `npm run bench -- operator`: one svc-operator process (`svc-operator run`, as the chart runs it) against a real
// kube-apiserver (the k8s tier's control plane, started by test/k8s/testbed-cli.js with no node, so the members'
// pods stay Pending as on a cordoned node) reconciling many SvcClusters. Measures the operator's resident memory,
// how long each new cluster waits for its first status, and the operator's API writes per minute once the first
// pass is done, counted by the apiserver itself (an audit log of every mutating request).
//
// Flags (after `npm run bench -- operator`):
//   --clusters=<n>      SvcClusters to create (default 500), spread over --namespaces=<n> namespaces (default 10)
//   --settle=<ms>       after every cluster has a status, the longest wait for the operator to go quiet (no write for
//                       30 s: each cluster has reached the step it waits at) before the window (default 600000)
//   --window=<ms>       the window in which writes are counted (default 60000)
//   --keep              keep the work folder (operator log, audit log, control-plane logs) and print where it is
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, closeSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load as loadYaml } from 'js-yaml';
import { svcClusterCrdYaml } from '../operator/api/crd.js';
import { formatTable, markdownTable, mib } from './lib/stats.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Options of the operator bench. */
export interface OperatorBenchOptions {
  clusters: number;
  namespaces: number;
  settleMs: number;
  windowMs: number;
  keep: boolean;
}

/** Parses the operator bench's flags; throws on an unknown flag or a bad number. */
export function parseOperatorArgs(argv: readonly string[]): OperatorBenchOptions {
  const o: OperatorBenchOptions = { clusters: 500, namespaces: 10, settleMs: 600000, windowMs: 60000, keep: false };
  const keys: Record<string, 'clusters' | 'namespaces' | 'settleMs' | 'windowMs'> = { clusters: 'clusters', namespaces: 'namespaces', settle: 'settleMs', window: 'windowMs' };
  for (const a of argv) {
    if (a === '--keep') {
      o.keep = true;
      continue;
    }
    const m = /^--([a-z]+)=(\d+)$/.exec(a);
    if (!m || !(m[1] in keys)) throw new Error(`operator bench: unknown or malformed flag ${a} (expected --clusters=N --namespaces=N --settle=MS --window=MS --keep)`);
    o[keys[m[1]]] = Number(m[2]);
  }
  if (o.clusters < 1 || o.namespaces < 1) throw new Error('operator bench: --clusters and --namespaces must be at least 1');
  return o;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exec(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 600000, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.slice(0, 4).join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Resolves with the first stdout line of `child` that matches `re` (rejects when it exits first). */
function waitForLine(child: ChildProcess, re: RegExp, what: string, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no "${re.source}" within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was up`));
    });
  });
}

function rssKiB(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
  return { rss: get('VmRSS'), hwm: get('VmHWM') };
}

interface AuditEvent {
  verb: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string };
  stage: string;
}

/** The audit events appended to `file` after byte `from`. */
function auditSince(file: string, from: number): { events: AuditEvent[]; end: number } {
  const end = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(end - from);
    readSync(fd, buf, 0, buf.length, from);
    const events = buf.toString('utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as AuditEvent);
    return { events, end };
  } finally {
    closeSync(fd);
  }
}

/** The operator's own requests: the bench's kubectl calls and the control plane's components are someone else. */
const isOperator = (e: AuditEvent) => e.stage === 'ResponseComplete' && !/^kubectl\//.test(e.userAgent ?? '') && !e.user.username.startsWith('system:');

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function clusterYaml(ns: string, name: string): string {
  return `apiVersion: svc.dev/v1alpha1\nkind: SvcCluster\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  version: 3.4.34\n  replicas: 3\n---\n`;
}

/** Runs the operator bench; resolves with the exit code. */
export async function benchOperator(argv: readonly string[]): Promise<number> {
  const o = parseOperatorArgs(argv);
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-operator-'));
  const say = (s: string) => console.log(`[operator bench +${((Date.now() - t0) / 1000).toFixed(0)}s] ${s}`);
  const t0 = Date.now();
  let testbed: ChildProcess | undefined;
  let operator: ChildProcess | undefined;
  try {
    say('control-plane binaries (test/k8s/build/build.sh; cached after the first build)');
    const binDir = (await exec('bash', [join(REPO, 'test/k8s/build/build.sh')], { timeoutMs: 60 * 60000 })).trim().split('\n').pop()!;
    const policy = join(work, 'audit-policy.yaml');
    const auditLog = join(work, 'audit.log');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Request\n  resources: [{group: svc.dev, resources: [svcclusters/status]}]\n- level: Metadata\n  verbs: [create, update, patch, delete, deletecollection]\n- level: None\n');
    writeFileSync(auditLog, '');
    testbed = spawn(process.execPath, [join(REPO, 'dist/test/k8s/testbed-cli.js'), join(work, 'cp'), '--control-plane-only',
      // the testbed's /24 holds 254 ClusterIPs; each cluster's client Service takes one
      '--apiserver-flag=--service-cluster-ip-range=10.96.0.0/16', `--apiserver-flag=--audit-policy-file=${policy}`, `--apiserver-flag=--audit-log-path=${auditLog}`, '--apiserver-flag=--audit-log-format=json'],
    { env: { ...process.env, SVC_K8S_BIN_DIR: binDir }, stdio: ['ignore', 'pipe', 'inherit'] });
    const kubeconfig = (await waitForLine(testbed, /KUBECONFIG=(\S+)/, 'the control plane', 5 * 60000))[1];
    const env = { ...process.env, KUBECONFIG: kubeconfig };
    const kubectl = (args: string[], input?: string) => exec(join(binDir, 'kubectl'), args, { env, input });
    say(`control plane up (kube-apiserver on svc); ${o.clusters} SvcClusters over ${o.namespaces} namespaces, no node`);
    await kubectl(['apply', '-f', '-'], svcClusterCrdYaml());
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/svcclusters.svc.dev']);

    const probePort = 18000 + (process.pid % 1000);
    // the heap ceiling the chart gives the operator pod (values.yaml heapLimitMiB)
    const heap = (loadYaml(readFileSync(join(REPO, 'charts/svc-operator/values.yaml'), 'utf8')) as { heapLimitMiB?: number }).heapLimitMiB ?? 0;
    operator = spawn(process.execPath, [...(heap > 0 ? [`--max-old-space-size=${heap}`, '--max-semi-space-size=2'] : []), join(REPO, 'bin/svc-operator'), 'run', `--kubeconfig=${kubeconfig}`, `--probe-port=${probePort}`, '--probe-address=127.0.0.1'],
      { stdio: ['ignore', openSync(join(work, 'operator.log'), 'a'), openSync(join(work, 'operator.log'), 'a')] });
    const pid = operator.pid!;
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${probePort}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (operator.exitCode !== null || i > 120) throw new Error(`the operator did not become ready: see ${join(work, 'operator.log')}`);
      await sleep(500);
    }
    const idle = rssKiB(pid);
    say(`operator ready (pid ${pid}, RSS ${(idle.rss / 1024).toFixed(0)} MiB with no clusters, heap limit ${heap > 0 ? `${heap} MiB as the chart sets it` : 'Node\'s default'})`);

    // RSS sampled every second for the whole run
    let peakRss = idle.rss;
    const sampler = setInterval(() => {
      try {
        peakRss = Math.max(peakRss, rssKiB(pid).rss);
      } catch {
        // exited: reported below
      }
    }, 1000);

    const createdAt = new Map<string, number>();
    const perNs = Math.ceil(o.clusters / o.namespaces);
    let made = 0;
    for (let n = 0; n < o.namespaces && made < o.clusters; n++) {
      const ns = `bench-${n}`;
      await kubectl(['create', 'namespace', ns]);
      let yaml = '';
      const names: string[] = [];
      for (let i = 0; i < perNs && made < o.clusters; i++, made++) {
        names.push(`${ns}/c${i}`);
        yaml += clusterYaml(ns, `c${i}`);
      }
      await kubectl(['create', '-f', '-'], yaml);
      const at = Date.now();
      for (const k of names) createdAt.set(k, at);
    }
    say(`${made} SvcClusters created; waiting for every one to have a status`);

    const firstStatus = new Map<string, number>();
    while (firstStatus.size < createdAt.size) {
      if (operator.exitCode !== null) throw new Error(`the operator exited (${operator.exitCode}): see ${join(work, 'operator.log')}`);
      if (Date.now() - t0 > 30 * 60000) throw new Error(`only ${firstStatus.size} of ${createdAt.size} clusters have a status after 30 min`);
      const list = JSON.parse(await kubectl(['get', 'svcc', '-A', '-o', 'json'])) as { items: Array<{ metadata: { namespace: string; name: string; generation: number }; status?: { observedGeneration?: number; phase?: string } }> };
      const now = Date.now();
      for (const it of list.items) {
        const key = `${it.metadata.namespace}/${it.metadata.name}`;
        if (!firstStatus.has(key) && it.status?.phase) firstStatus.set(key, now);
      }
      await sleep(1000);
    }
    const firstPassAt = Date.now();
    const latencies = [...firstStatus].map(([k, t]) => (t - createdAt.get(k)!) / 1000).sort((a, b) => a - b);
    const firstPass = auditSince(auditLog, 0);
    const firstPassWrites = firstPass.events.filter(isOperator).length;
    say(`every cluster has a status after ${((firstPassAt - Math.min(...createdAt.values())) / 1000).toFixed(1)} s (${firstPassWrites} operator writes); waiting for the operator to go quiet (at most ${o.settleMs / 1000} s)`);
    // quiet: no operator write for 30 s, i.e. each cluster's first pass has reached the step it waits at
    let lastWriteAt = Date.now();
    let seen = statSync(auditLog).size;
    while (Date.now() - lastWriteAt < 30000 && Date.now() - firstPassAt < o.settleMs) {
      await sleep(5000);
      const more = auditSince(auditLog, seen);
      seen = more.end;
      if (more.events.some(isOperator)) lastWriteAt = Date.now();
    }
    const quietAt = Date.now() - lastWriteAt >= 30000 ? lastWriteAt : undefined;
    const writesToQuiet = auditSince(auditLog, 0).events.filter(isOperator).length;
    const from = statSync(auditLog).size;
    const rssBefore = rssKiB(pid).rss;
    say(`counting the operator's writes for ${o.windowMs / 1000} s`);
    await sleep(o.windowMs);
    const window = auditSince(auditLog, from).events.filter(isOperator);
    const rssAfter = rssKiB(pid);
    clearInterval(sampler);
    const perMinute = (window.length * 60000) / o.windowMs;
    const byKind = new Map<string, number>();
    for (const e of window) {
      const k = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
      byKind.set(k, (byKind.get(k) ?? 0) + 1);
    }
    const rows = [
      ['SvcClusters', String(createdAt.size)],
      ['operator RSS, no clusters', `${mib(idle.rss * 1024)} MiB`],
      ['operator RSS, peak (1 s samples)', `${mib(peakRss * 1024)} MiB`],
      ['operator RSS after the window', `${mib(rssAfter.rss * 1024)} MiB (VmHWM ${mib(rssAfter.hwm * 1024)} MiB; ${mib(rssBefore * 1024)} MiB before it)`],
      ['first status after creation, p50 / p99 / max', `${quantile(latencies, 0.5).toFixed(1)} / ${quantile(latencies, 0.99).toFixed(1)} / ${latencies[latencies.length - 1].toFixed(1)} s`],
      ['every cluster with a status (creation of the first to status of the last)', `${((firstPassAt - Math.min(...createdAt.values())) / 1000).toFixed(1)} s`],
      ['operator quiet (last write of the first pass) after', quietAt === undefined ? `not within ${o.settleMs / 1000} s` : `${((quietAt - Math.min(...createdAt.values())) / 1000).toFixed(1)} s`],
      ['operator writes until then', `${writesToQuiet} (${(writesToQuiet / createdAt.size).toFixed(1)} per cluster)`],
      [`operator writes per minute after it (${o.windowMs / 1000} s window)`, perMinute.toFixed(1)],
    ];
    const table = [['figure', 'value'], ...rows];
    console.log(`\n${formatTable(table)}`);
    if (byKind.size > 0) console.log(`\nwrites in the window by kind:\n${[...byKind].map(([k, n]) => `  ${k}: ${n}`).join('\n')}`);
    console.log(`\nmarkdown:\n\n${markdownTable(table)}`);
    return 0;
  } finally {
    operator?.kill('SIGTERM');
    if (testbed && testbed.exitCode === null) {
      const exited = new Promise((r) => testbed!.once('exit', r));
      testbed.kill('SIGTERM');
      await Promise.race([exited, sleep(60000)]);
    }
    if (o.keep) console.log(`work folder kept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}
