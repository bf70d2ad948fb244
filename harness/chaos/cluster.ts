// The cluster a chaos run drives: three (or more) svc processes on loopback, each behind a PeerProxy for
// its inbound peer traffic, with a record of which exits we caused, so that any other exit counts as a
// crash. test/support/svc-cluster.ts serves the other tests; this one differs in the peer wiring
// (listen on the real port, advertise the proxy) and in the bookkeeping faults need.

import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../ports.js';
import { httpGet, sleep, spawnLogged, type ExitStatus, type LoggedProcess } from '../process.js';
import { DEFAULT_SVC_ENTRY, postJson, svcNodeArgs, type GatewayAnswer } from '../svc-cluster.js';
import { PeerProxy } from './proxy.js';

export interface ChaosMember {
  index: number;
  name: string;
  clientURL: string;
  /** 127.0.0.1:<client port> */
  endpoint: string;
  peerPort: number;
  proxy: PeerProxy;
  dataDir: string;
  logFile: string;
  process?: LoggedProcess;
  version: string;
  /** True while an exit of the current process is one we asked for. */
  exitExpected: boolean;
  /** Exits nobody asked for: "<name> exited with code 1 at +12.3s". */
  crashes: string[];
}

export interface ChaosClusterOptions {
  size?: number;
  /** SVC_VERSION of every member at the start ('' = newest). */
  version?: string;
  extraArgs?: readonly string[];
  /** For the proxies' drop decisions (seeded by the run). */
  rand?: () => number;
  entry?: string;
}

/** Raised when the cluster does not reach a state in time. */
export class ChaosClusterError extends Error {
  readonly code: 'TIMEOUT' | 'HTTP';
  constructor(code: 'TIMEOUT' | 'HTTP', message: string) {
    super(message);
    this.name = 'ChaosClusterError';
    this.code = code;
  }
}

/** A running chaos cluster. */
export class ChaosCluster {
  readonly members: ChaosMember[] = [];
  readonly started = Date.now();

  private constructor(
    readonly dir: string,
    private readonly args: (m: ChaosMember) => string[],
    private readonly entry: string,
  ) {}

  /** Starts every member and waits for all to be healthy. */
  static async start(opts: ChaosClusterOptions = {}): Promise<ChaosCluster> {
    const size = opts.size ?? 3;
    const dir = mkdtempSync(join(tmpdir(), 'svc-chaos-'));
    const ports = await freePorts(size * 3);
    const token = `chaos-${process.pid}-${Date.now().toString(36)}`;
    const proxyURL = (i: number) => `http://127.0.0.1:${ports[i * 3 + 2]}`;
    const initialCluster = Array.from({ length: size }, (_, i) => `m${i + 1}=${proxyURL(i)}`).join(',');
    const args = (m: ChaosMember) => [
      `--name=${m.name}`,
      `--data-dir=${m.dataDir}`,
      `--listen-client-urls=${m.clientURL}`,
      `--advertise-client-urls=${m.clientURL}`,
      `--listen-peer-urls=http://127.0.0.1:${m.peerPort}`,
      `--initial-advertise-peer-urls=${proxyURL(m.index)}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-token=${token}`,
      '--initial-cluster-state=new',
      ...(opts.extraArgs ?? []),
    ];
    const c = new ChaosCluster(dir, args, opts.entry ?? DEFAULT_SVC_ENTRY);
    for (let i = 0; i < size; i++) {
      const name = `m${i + 1}`;
      const dataDir = join(dir, `${name}.data`);
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      const proxy = new PeerProxy(ports[i * 3 + 2], ports[i * 3 + 1], opts.rand);
      await proxy.listen();
      c.members.push({
        index: i,
        name,
        clientURL: `http://127.0.0.1:${ports[i * 3]}`,
        endpoint: `127.0.0.1:${ports[i * 3]}`,
        peerPort: ports[i * 3 + 1],
        proxy,
        dataDir,
        logFile: join(dir, `${name}.log`),
        version: opts.version ?? '',
        exitExpected: false,
        crashes: [],
      });
    }
    for (const m of c.members) c.launch(m, m.version);
    try {
      await c.waitHealthy(60000);
    } catch (e) {
      await c.close();
      throw e;
    }
    return c;
  }

  /** Seconds since the cluster started, for messages. */
  private elapsed(): string {
    return `+${((Date.now() - this.started) / 1000).toFixed(1)}s`;
  }

  private launch(m: ChaosMember, version: string): void {
    appendFileSync(m.logFile, `=== svc start ${new Date().toISOString()} SVC_VERSION=${version || '(unset)'}\n`);
    const p = spawnLogged(process.execPath, svcNodeArgs(this.entry, this.args(m)), {
      logFile: m.logFile,
      name: m.name,
      env: { SVC_VERSION: version || undefined },
    });
    m.process = p;
    m.version = version;
    m.exitExpected = false;
    void p.exited.then((st) => {
      if (m.process === p && !m.exitExpected) m.crashes.push(`${m.name} exited by itself (${describeExit(st)}) at ${this.elapsed()}`);
    });
  }

  /** True when member i's process is running. */
  isRunning(i: number): boolean {
    const p = this.members[i].process;
    return p !== undefined && p.exitStatus() === null;
  }

  /** Indexes of running members. */
  running(): number[] {
    return this.members.filter((m) => this.isRunning(m.index)).map((m) => m.index);
  }

  /** Sends SIGKILL or SIGTERM to member i and waits for the exit. */
  async signal(i: number, sig: 'SIGKILL' | 'SIGTERM'): Promise<ExitStatus | undefined> {
    const m = this.members[i];
    if (!this.isRunning(i)) return undefined;
    m.exitExpected = true;
    const st = await m.process!.stop(sig, sig === 'SIGTERM' ? 20000 : 5000);
    if (sig === 'SIGTERM' && (st.code !== 0 || st.signal)) {
      m.crashes.push(`${m.name} did not exit cleanly on SIGTERM (${describeExit(st)}) at ${this.elapsed()}`);
    }
    return st;
  }

  /** Starts member i again (same data dir and flags), optionally as another release. */
  restart(i: number, version?: string): void {
    if (this.isRunning(i)) return;
    this.launch(this.members[i], version ?? this.members[i].version);
  }

  /** Index of the single member reporting itself leader, or undefined. */
  async leader(): Promise<number | undefined> {
    const leaders: number[] = [];
    for (const i of this.running()) {
      try {
        const res = await httpGet(`${this.members[i].clientURL}/metrics`);
        if (/^svc_server_is_leader 1$/m.test(res.body)) leaders.push(i);
      } catch {
        // not answering
      }
    }
    return leaders.length === 1 ? leaders[0] : undefined;
  }

  /** Waits for a single leader; returns its index. */
  async waitLeader(timeoutMs = 30000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const l = await this.leader();
      if (l !== undefined) return l;
      if (Date.now() > deadline) throw new ChaosClusterError('TIMEOUT', `no single leader within ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** Waits until every running member answers /health 200; resolves with the time it took. */
  async waitHealthy(timeoutMs = 30000): Promise<number> {
    const t0 = Date.now();
    const deadline = t0 + timeoutMs;
    for (;;) {
      const bad: string[] = [];
      for (const i of this.running()) {
        try {
          const r = await httpGet(`${this.members[i].clientURL}/health`);
          if (r.status !== 200) bad.push(`${this.members[i].name}: ${r.status} ${r.body.trim()}`);
        } catch (e) {
          bad.push(`${this.members[i].name}: ${(e as Error).message}`);
        }
      }
      if (bad.length === 0) return Date.now() - t0;
      if (Date.now() > deadline) throw new ChaosClusterError('TIMEOUT', `not healthy within ${timeoutMs} ms: ${bad.join('; ')}`);
      await sleep(200);
    }
  }

  /** POST to member i's JSON gateway. */
  post(i: number, path: string, body: unknown, timeoutMs = 10000): Promise<GatewayAnswer> {
    return postJson(`${this.members[i].clientURL}${path}`, body, timeoutMs);
  }

  /** Log text of member i (all its processes). */
  log(i: number): string {
    try {
      return readFileSync(this.members[i].logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** Log size of member i, to scan only what came after a point. */
  logSize(i: number): number {
    try {
      return statSync(this.members[i].logFile).size;
    } catch {
      return 0;
    }
  }

  /** The last lines of every member's log. */
  logTails(lines = 30): string {
    return this.members.map((m, i) => `--- ${m.name} (${m.logFile})\n${this.log(i).split('\n').slice(-lines).join('\n')}`).join('\n');
  }

  /** Stops everything; removes the temp dir unless keep. */
  async close(keep = false): Promise<void> {
    for (const m of this.members) m.exitExpected = true;
    await Promise.all(this.members.map((m) => m.process?.stop('SIGKILL', 5000)));
    await Promise.all(this.members.map((m) => m.proxy.close()));
    if (!keep && !process.env.SVC_TEST_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }
}

function describeExit(st: ExitStatus): string {
  return st.signal ? `signal ${st.signal}` : `code ${st.code}`;
}
