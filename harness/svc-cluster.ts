// The one launcher of svc processes for tests, chaos runs and benchmarks: `spawnSvc` starts one member
// process; `startSvcCluster` a real cluster on loopback, one child process per member, each with its own data
// dir and log file under one temp dir. Members can be stopped, killed, restarted (optionally as another
// release, as the rolling upgrade does), added and removed; exits nobody asked for are recorded as crashes;
// small HTTP helpers talk to the v3 JSON gateway. `useSvcClusters` is the mocha fixture around it.
//
// Which server runs: by default the build this file was compiled into (dist-<x>/harness/ ->
// dist-<x>/server/cli/svc.js), started the way bin/svc starts it; SVC_TEST_SVC_ENTRY (or opts.entry) names
// another compiled svc.js. Set SVC_TEST_KEEP=1 to keep the temp dir after close().

import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { memberArgs } from './member-args.js';
import { freePorts } from './ports.js';
import { HarnessError } from './errors.js';
import { httpGet, sleep, spawnLogged, type ExitStatus, type LoggedProcess } from './process.js';

/** The compiled server entry this test build runs by default. */
export const DEFAULT_SVC_ENTRY = process.env.SVC_TEST_SVC_ENTRY ?? fileURLToPath(new URL('../server/cli/svc.js', import.meta.url));

export interface SpawnSvcOptions {
  logFile: string;
  /** A short name for messages. */
  name?: string;
  /** SVC_VERSION ('' or undefined: unset, the newest release). */
  version?: string;
  /** Compiled svc.js to run. Default DEFAULT_SVC_ENTRY. */
  entry?: string;
  /** Node flags before the script (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Working directory (relative data dirs and unix socket paths resolve there). */
  cwd?: string;
}

/** What a finished svc process printed, and its exit status. */
export interface SvcRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs svc with `args` to its end (usage errors, refused flags, --help); never rejects for a non-zero exit. */
export function runSvc(args: readonly string[], o: { version?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<SvcRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...o.env };
  if (o.version !== undefined) env.SVC_VERSION = o.version;
  return new Promise((resolve) => {
    execFile(process.execPath, svcNodeArgs(DEFAULT_SVC_ENTRY, args), { env, timeout: o.timeoutMs ?? 30000, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Starts one svc process with `args` as its flags, exactly as bin/svc would run them. */
export function spawnSvc(args: readonly string[], o: SpawnSvcOptions): LoggedProcess {
  // An undefined value drops the variable from the child's environment (the newest release runs).
  const env: NodeJS.ProcessEnv = { ...o.env, SVC_VERSION: o.version || undefined };
  return spawnLogged(process.execPath, [...(o.nodeArgs ?? []), ...svcNodeArgs(o.entry ?? DEFAULT_SVC_ENTRY, args)], { logFile: o.logFile, name: o.name, env, cwd: o.cwd });
}

export interface SvcClusterOptions {
  /** Members. Default 3. */
  size?: number;
  /** SVC_VERSION for every member. Default: unset (the newest release). */
  version?: string;
  /** Extra flags for every member. */
  extraArgs?: readonly string[];
  /** Extra environment for every member. */
  env?: NodeJS.ProcessEnv;
  /** Parent of the cluster's temp dir. Default os.tmpdir(). */
  dataRoot?: string;
  /** --initial-cluster-token. Default a random one. */
  token?: string;
  /** Compiled svc.js to run. Default DEFAULT_SVC_ENTRY. */
  entry?: string;
  /** Wait for every member's /health after starting. Default true. */
  waitHealthy?: boolean;
  /** How long waits may take. Default 30 s. */
  timeoutMs?: number;
  /** Node flags for each member process (e.g. --cpu-prof), given its name. */
  nodeArgs?: (memberName: string) => readonly string[];
  /**
   * The peer URL member `index` advertises (and the others dial) instead of the one it listens on; chaos runs
   * put a fault proxy there. Default: the listen URL.
   */
  advertisePeerURL?: (index: number, listenPeerURL: string) => Promise<string>;
}

export interface SvcMember {
  name: string;
  /** http://127.0.0.1:<port> */
  clientURL: string;
  peerURL: string;
  /** The peer URL the others dial (peerURL unless opts.advertisePeerURL gave another). */
  advertisedPeerURL: string;
  /** 127.0.0.1:<port>, as etcdctl --endpoints wants it. */
  endpoint: string;
  dataDir: string;
  /** One log per member, appended across restarts (each start writes a `=== svc start` marker line). */
  logFile: string;
  /** The current (or last) process. */
  process: LoggedProcess;
  /** SVC_VERSION of the current process ('' = unset). */
  version: string;
  /** The member's flags (restarts reuse them; start's initialCluster option replaces its cluster flags). */
  args: string[];
  /** Byte offset in logFile where the current process's output begins. */
  logOffset: number;
  /** True once removed from the cluster through removeMember. */
  removed: boolean;
  /** True while an exit of the current process is one we asked for (stop, kill, close). */
  exitExpected: boolean;
  /** Exits nobody asked for: "m2 exited by itself (code 1) at +12.3s". */
  crashes: string[];
}

export interface StartMemberOptions {
  /** Another SVC_VERSION for this start. */
  version?: string;
  /** Flags added after the member's own flags for this start. */
  extraArgs?: readonly string[];
  /** Wait for /health 200. Default true. */
  waitHealthy?: boolean;
  /**
   * Replace the member's --initial-cluster and --initial-cluster-state from this start on (kept for its later
   * restarts): a member that lost its data and was added again joins the running cluster under a new ID.
   */
  initialCluster?: { cluster: string; state: 'new' | 'existing' };
  /** This process is expected to end by itself (a start the server must refuse): its exit is not a crash. */
  expectExit?: boolean;
}

export interface GatewayAnswer {
  status: number;
  /** Parsed JSON body (or {raw} when the body is not JSON). */
  body: Record<string, unknown>;
  text: string;
}

export interface KeyValue {
  key: string;
  value: string;
  modRevision: number;
}

export interface SvcCluster {
  /** The temp dir holding every data dir and log. */
  dir: string;
  members: SvcMember[];
  /** Indexes of members whose process is running. */
  running(): number[];
  /** SIGTERM, wait for exit. */
  stop(i: number): Promise<ExitStatus>;
  /** SIGKILL, wait for exit. */
  kill(i: number): Promise<ExitStatus>;
  /** Starts member i again with its flags and data dir (optionally another release or extra flags). */
  start(i: number, opts?: StartMemberOptions): Promise<SvcMember>;
  /** Index of the member reporting svc_server_is_leader 1 (waits for one; only running members). */
  leader(timeoutMs?: number): Promise<number>;
  /** Waits until every running member answers /health 200. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** POST a JSON body to a gateway path (e.g. '/v3/kv/put') of member i. */
  post(i: number, path: string, body: unknown, timeoutMs?: number): Promise<GatewayAnswer>;
  /** Put through member i's gateway; throws HarnessError('HTTP') unless 200. Returns the header revision. */
  put(i: number, key: string, value: string): Promise<number>;
  /** Get through member i's gateway; undefined when absent. */
  get(i: number, key: string, opts?: { serializable?: boolean }): Promise<string | undefined>;
  /** Every key with `prefix` through member i's gateway. */
  range(i: number, prefix: string, opts?: { serializable?: boolean }): Promise<KeyValue[]>;
  /** Member i's id (decimal string, as the gateway writes uint64s). */
  memberId(i: number): Promise<string>;
  /** Maintenance status of member i, as the gateway answers it. */
  status(i: number): Promise<Record<string, unknown>>;
  /** MemberAdd (as a learner with opts.isLearner) through a running member, then start a new process with --initial-cluster-state existing. */
  addMember(opts?: StartMemberOptions & { isLearner?: boolean }): Promise<number>;
  /** MemberRemove of member i, sent through another running member. */
  removeMember(i: number): Promise<void>;
  /** The log of member i's current process. */
  currentLog(i: number): string;
  /** Waits until member i's current process logs a line matching pattern; resolves with the line. */
  waitForLog(i: number, pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The last lines of every member's log, for failure reports. */
  logTails(lines?: number): string;
  /** Kills every member and removes the temp dir (unless keep or SVC_TEST_KEEP=1). */
  close(opts?: { keep?: boolean }): Promise<void>;
}

interface MemberSpec {
  name: string;
  clientURL: string;
  peerURL: string;
  advertisedPeerURL: string;
}

/** Starts a fresh svc cluster of opts.size members and (by default) waits until every member is healthy. */
export async function startSvcCluster(opts: SvcClusterOptions = {}): Promise<SvcCluster> {
  const size = opts.size ?? 3;
  const timeoutMs = opts.timeoutMs ?? 30000;
  const entry = opts.entry ?? DEFAULT_SVC_ENTRY;
  const token = opts.token ?? `svc-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const dir = mkdtempSync(join(opts.dataRoot ?? tmpdir(), 'svc-cluster-'));
  const members: SvcMember[] = [];
  const started = Date.now();

  const spec = async (n: number): Promise<MemberSpec> => {
    const [c, p] = await freePorts(2);
    const peerURL = `http://127.0.0.1:${p}`;
    const advertisedPeerURL = opts.advertisePeerURL ? await opts.advertisePeerURL(n - 1, peerURL) : peerURL;
    return { name: `m${n}`, clientURL: `http://127.0.0.1:${c}`, peerURL, advertisedPeerURL };
  };

  const launch = (m: SvcMember, extra: readonly string[], version: string): void => {
    let offset = 0;
    try {
      offset = statSync(m.logFile).size;
    } catch {
      // first start
    }
    appendFileSync(m.logFile, `=== svc start ${new Date().toISOString()} SVC_VERSION=${version || '(unset)'} ${[...m.args, ...extra].join(' ')}\n`);
    const p = spawnSvc([...m.args, ...extra], { logFile: m.logFile, name: m.name, version, entry, nodeArgs: opts.nodeArgs?.(m.name), env: opts.env });
    m.process = p;
    m.version = version;
    m.logOffset = offset;
    m.exitExpected = false;
    void p.exited.then((st) => {
      const at = `+${((Date.now() - started) / 1000).toFixed(1)}s`;
      if (m.process === p && !m.exitExpected) m.crashes.push(`${m.name} exited by itself (${describeExit(st)}) at ${at}`);
    });
  };
  const stopMember = (m: SvcMember, signal: NodeJS.Signals, graceMs: number) => {
    m.exitExpected = true;
    return m.process.stop(signal, graceMs);
  };

  const newMember = (s: MemberSpec, initialCluster: string, state: 'new' | 'existing'): SvcMember => {
    const dataDir = join(dir, `${s.name}.data`);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const args = [
      ...memberArgs({ name: s.name, dataDir, clientUrl: s.clientURL, peerUrl: s.peerURL, advertisedPeerUrl: s.advertisedPeerURL, initialCluster, token, state }),
      ...(opts.extraArgs ?? []),
    ];
    return {
      ...s,
      endpoint: s.clientURL.replace(/^http:\/\//, ''),
      dataDir,
      logFile: join(dir, `${s.name}.log`),
      process: undefined as unknown as LoggedProcess,
      version: opts.version ?? '',
      args,
      logOffset: 0,
      removed: false,
      exitExpected: false,
      crashes: [],
    };
  };

  const isRunning = (i: number) => members[i].process !== undefined && members[i].process.exitStatus() === null;
  const running = () => members.map((_, i) => i).filter(isRunning);

  const post = (i: number, path: string, body: unknown, t = 10000) => postJson(`${members[i].clientURL}${path}`, body, t);

  const waitMemberHealthy = async (i: number, t = timeoutMs) => {
    const m = members[i];
    const deadline = Date.now() + t;
    let last: string;
    for (;;) {
      try {
        const res = await httpGet(`${m.clientURL}/health`);
        if (res.status === 200) return;
        last = `HTTP ${res.status} ${res.body.trim()}`;
      } catch (e) {
        last = (e as Error).message;
      }
      const st = m.process.exitStatus();
      if (st) throw new HarnessError('TIMEOUT', `${m.name} exited (${describeExit(st)}) while waiting for /health:\n${tail(currentLog(i), 30)}`);
      if (Date.now() > deadline) throw new HarnessError('TIMEOUT', `${m.name} not healthy within ${t} ms (last: ${last}):\n${tail(currentLog(i), 30)}`);
      await sleep(150);
    }
  };

  const currentLog = (i: number) => {
    try {
      return readFileSync(members[i].logFile).subarray(members[i].logOffset).toString('utf8');
    } catch {
      return '';
    }
  };

  const handle: SvcCluster = {
    dir,
    members,
    running,
    async stop(i) {
      return stopMember(members[i], 'SIGTERM', 20000);
    },
    async kill(i) {
      return stopMember(members[i], 'SIGKILL', 5000);
    },
    async start(i, o = {}) {
      const m = members[i];
      if (isRunning(i)) throw new HarnessError('NO_MEMBER', `${m.name} is still running`);
      if (o.initialCluster) {
        const ic = o.initialCluster;
        m.args = m.args.map((a) =>
          a.startsWith('--initial-cluster=') ? `--initial-cluster=${ic.cluster}` : a.startsWith('--initial-cluster-state=') ? `--initial-cluster-state=${ic.state}` : a,
        );
      }
      launch(m, o.extraArgs ?? [], o.version ?? m.version);
      if (o.expectExit) m.exitExpected = true;
      if (o.waitHealthy ?? true) await waitMemberHealthy(i);
      return m;
    },
    async leader(t = timeoutMs) {
      const deadline = Date.now() + t;
      for (;;) {
        const leaders: number[] = [];
        for (const i of running()) {
          try {
            const res = await httpGet(`${members[i].clientURL}/metrics`);
            if (/^svc_server_is_leader 1$/m.test(res.body)) leaders.push(i);
          } catch {
            // not answering yet
          }
        }
        if (leaders.length === 1) return leaders[0];
        if (Date.now() > deadline) throw new HarnessError('TIMEOUT', `no single leader within ${t} ms (leaders: ${leaders.map((i) => members[i].name).join(',') || 'none'})`);
        await sleep(200);
      }
    },
    async waitHealthy(t = timeoutMs) {
      await Promise.all(running().map((i) => waitMemberHealthy(i, t)));
    },
    post,
    async put(i, key, value) {
      const a = await post(i, '/v3/kv/put', { key: b64(key), value: b64(value) });
      if (a.status !== 200) throw new HarnessError('HTTP', `put ${key} via ${members[i].name}: HTTP ${a.status} ${a.text}`);
      return Number((a.body.header as { revision?: string } | undefined)?.revision ?? 0);
    },
    async get(i, key, o = {}) {
      const a = await post(i, '/v3/kv/range', { key: b64(key), serializable: o.serializable ?? false });
      if (a.status !== 200) throw new HarnessError('HTTP', `get ${key} via ${members[i].name}: HTTP ${a.status} ${a.text}`);
      const kvs = (a.body.kvs as Array<{ value?: string }> | undefined) ?? [];
      return kvs.length ? unb64(kvs[0].value ?? '') : undefined;
    },
    async range(i, prefix, o = {}) {
      const a = await post(i, '/v3/kv/range', { key: b64(prefix), range_end: b64(prefixEnd(prefix)), serializable: o.serializable ?? false }, 20000);
      if (a.status !== 200) throw new HarnessError('HTTP', `range ${prefix} via ${members[i].name}: HTTP ${a.status} ${a.text}`);
      const kvs = (a.body.kvs as Array<{ key: string; value?: string; mod_revision: string }> | undefined) ?? [];
      return kvs.map((kv) => ({ key: unb64(kv.key), value: unb64(kv.value ?? ''), modRevision: Number(kv.mod_revision) }));
    },
    async memberId(i) {
      const a = await post(i, '/v3/maintenance/status', {});
      const id = (a.body.header as { member_id?: string } | undefined)?.member_id;
      if (a.status !== 200 || !id) throw new HarnessError('HTTP', `status of ${members[i].name}: HTTP ${a.status} ${a.text}`);
      return id;
    },
    async status(i) {
      const a = await post(i, '/v3/maintenance/status', {});
      if (a.status !== 200) throw new HarnessError('HTTP', `status of ${members[i].name}: HTTP ${a.status} ${a.text}`);
      return a.body;
    },
    async addMember(o = {}) {
      const via = running()[0];
      if (via === undefined) throw new HarnessError('NO_MEMBER', 'no running member to send MemberAdd to');
      const s = await spec(members.length + 1);
      // Strict reconfiguration refuses an add until the member has been connected to every voter for 5 s (as the
      // reference does): right after a start, wait that out.
      const req = { peerURLs: [s.advertisedPeerURL], isLearner: !!o.isLearner };
      let a = await post(via, '/v3/cluster/member/add', req);
      for (const deadline = Date.now() + 15000; a.status === 503 && a.text.includes('unhealthy cluster') && Date.now() < deadline;) {
        await sleep(500);
        a = await post(via, '/v3/cluster/member/add', req);
      }
      if (a.status !== 200) throw new HarnessError('HTTP', `member add via ${members[via].name}: HTTP ${a.status} ${a.text}`);
      const ic = [...members.filter((m) => !m.removed), s].map((m) => `${m.name}=${m.advertisedPeerURL}`).join(',');
      const m = newMember(s, ic, 'existing');
      members.push(m);
      const i = members.length - 1;
      launch(m, o.extraArgs ?? [], o.version ?? m.version);
      if (o.waitHealthy ?? true) await waitMemberHealthy(i);
      return i;
    },
    async removeMember(i) {
      const id = await handle.memberId(i);
      const via = running().find((j) => j !== i);
      if (via === undefined) throw new HarnessError('NO_MEMBER', 'no other running member to send MemberRemove to');
      const a = await post(via, '/v3/cluster/member/remove', { ID: id });
      if (a.status !== 200) throw new HarnessError('HTTP', `member remove via ${members[via].name}: HTTP ${a.status} ${a.text}`);
      members[i].removed = true;
    },
    currentLog,
    async waitForLog(i, pattern, t = timeoutMs) {
      const deadline = Date.now() + t;
      for (;;) {
        const line = currentLog(i)
          .split('\n')
          .find((l) => pattern.test(l));
        if (line !== undefined) return line;
        if (Date.now() > deadline) throw new HarnessError('TIMEOUT', `${members[i].name} did not log ${pattern} within ${t} ms:\n${tail(currentLog(i), 30)}`);
        await sleep(100);
      }
    },
    logTails(lines = 40) {
      return members
        .map((m) => {
          let text = '';
          try {
            text = readFileSync(m.logFile, 'utf8');
          } catch {
            // no log yet
          }
          return `----- ${m.name} (${m.logFile}) last ${lines} lines -----\n${tail(text, lines)}`;
        })
        .join('\n');
    },
    async close(o = {}) {
      await Promise.all(members.filter((m) => m.process).map((m) => stopMember(m, 'SIGKILL', 5000)));
      if (!o.keep && process.env.SVC_TEST_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    const specs: MemberSpec[] = [];
    for (let n = 1; n <= size; n++) specs.push(await spec(n));
    const ic = specs.map((s) => `${s.name}=${s.advertisedPeerURL}`).join(',');
    for (const s of specs) members.push(newMember(s, ic, 'new'));
    for (const m of members) launch(m, [], m.version);
    if (opts.waitHealthy ?? true) await handle.waitHealthy();
  } catch (err) {
    const logs = handle.logTails(20);
    await handle.close();
    (err as Error).message += `\n${logs}`;
    throw err;
  }
  return handle;
}

/** `node` arguments that run the compiled svc entry exactly as bin/svc does, with `args` as its flags. */
export function svcNodeArgs(entry: string, args: readonly string[]): string[] {
  const url = pathToFileURL(entry).href;
  const script =
    `import(${JSON.stringify(url)}).then((m) => m.main(process.argv.slice(1)))` +
    `.then((code) => { if (typeof code === 'number') process.exitCode = code; })`;
  return ['--enable-source-maps', '-e', script, '--', ...args];
}

/**
 * The mocha fixture of a suite that starts clusters: `const clusters = useSvcClusters();`, then
 * `const c = await clusters.start({...})` in a test. Clusters are closed after each test (or, with
 * `{ closeAfter: 'all' }`, after the suite, for tests that share one), and their log tails are printed
 * when a test fails.
 */
export function useSvcClusters(o: { closeAfter?: 'each' | 'all' } = {}): SvcClusterFixture {
  const open: SvcCluster[] = [];
  printLogsOnFailure(() => open);
  const closeAll = async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  };
  if (o.closeAfter === 'all') after(closeAll);
  else afterEach(closeAll);
  return {
    async start(opts) {
      const c = await startSvcCluster(opts);
      open.push(c);
      return c;
    },
    last() {
      const c = open.at(-1);
      if (!c) throw new HarnessError('NO_MEMBER', 'no cluster started in this suite yet');
      return c;
    },
    close: closeAll,
  };
}

/** What useSvcClusters gives a suite. */
export interface SvcClusterFixture {
  /** Starts a cluster that the fixture closes. */
  start(opts?: SvcClusterOptions): Promise<SvcCluster>;
  /** The cluster started last (for tests that go on with an earlier test's cluster). */
  last(): SvcCluster;
  /** Closes every cluster now. */
  close(): Promise<void>;
}

/** Registers a mocha afterEach that prints the clusters' log tails when a test of the current suite fails. */
export function printLogsOnFailure(clusters: () => Array<{ logTails(lines?: number): string } | undefined>): void {
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const c of clusters()) if (c) process.stderr.write(`\n${c.logTails(40)}\n`);
  });
}

/**
 * One HTTP request with an optional body of `contentType`; never rejects for an HTTP status (see .status), rejects
 * on connection errors. The body is parsed as JSON when it is JSON ({raw} otherwise).
 */
export function httpRequest(
  url: string,
  opts: { method: string; payload?: string; contentType?: string; timeoutMs?: number },
): Promise<GatewayAnswer & { headers: http.IncomingHttpHeaders }> {
  const { method, payload = '', timeoutMs = 10000 } = opts;
  const headers = opts.contentType ? { 'Content-Type': opts.contentType, 'Content-Length': Buffer.byteLength(payload) } : {};
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, timeout: timeoutMs, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          parsed = { raw: text };
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** POST `body` as JSON (see httpRequest). */
export function postJson(url: string, body: unknown, timeoutMs = 10000): Promise<GatewayAnswer> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return httpRequest(url, { method: 'POST', payload, contentType: 'application/json', timeoutMs });
}

/** Base64 of a UTF-8 string (or of raw bytes). */
export function b64(s: string | Buffer): string {
  return (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
}

/** UTF-8 string of base64. */
export function unb64(s: string): string {
  return Buffer.from(s, 'base64').toString('utf8');
}

/** The range end covering every key with `prefix` (the reference client's --prefix). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix, 'utf8');
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) {
      const out = Buffer.from(b.subarray(0, i + 1));
      out[i]++;
      return out;
    }
  }
  return Buffer.from([0]);
}

function describeExit(st: ExitStatus): string {
  return st.signal ? `signal ${st.signal}` : `code ${st.code}`;
}

function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}
