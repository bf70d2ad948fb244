// The cluster a chaos run drives: an svc cluster from the one launcher (harness/svc-cluster.ts) with a
// PeerProxy in front of each member's inbound peer traffic (members listen on their real peer port and
// advertise the proxy's), plus the calls faults need. Exits nobody asked for are the launcher's crashes.

import { readFileSync, statSync } from 'node:fs';
import { HarnessError } from '../errors.js';
import { freePort } from '../ports.js';
import { httpGet, sleep, type ExitStatus } from '../process.js';
import { startSvcCluster, type GatewayAnswer, type StartMemberOptions, type SvcCluster, type SvcMember } from '../svc-cluster.js';
import { PeerProxy } from './proxy.js';

/** A member of a chaos cluster: the launcher's member, its index and the proxy in front of its peer port. */
export interface ChaosMember extends SvcMember {
  index: number;
  proxy: PeerProxy;
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

/** A running chaos cluster. */
export class ChaosCluster {
  readonly members: ChaosMember[];
  readonly dir: string;

  private constructor(
    private readonly svc: SvcCluster,
    proxies: PeerProxy[],
  ) {
    this.dir = svc.dir;
    this.members = svc.members.map((m, index) => Object.assign(m, { index, proxy: proxies[index] }));
  }

  /** Starts every member behind its proxy and waits for all to be healthy. */
  static async start(opts: ChaosClusterOptions = {}): Promise<ChaosCluster> {
    const proxies: PeerProxy[] = [];
    const closeProxies = () => Promise.all(proxies.map((p) => p.close()));
    try {
      const svc = await startSvcCluster({
        size: opts.size ?? 3,
        version: opts.version ?? '',
        extraArgs: opts.extraArgs,
        entry: opts.entry,
        timeoutMs: 60000,
        async advertisePeerURL(i, listenURL) {
          const proxy = new PeerProxy(await freePort(), Number(new URL(listenURL).port), opts.rand);
          await proxy.listen();
          proxies[i] = proxy;
          return `http://127.0.0.1:${proxy.listenPort}`;
        },
      });
      return new ChaosCluster(svc, proxies);
    } catch (e) {
      await closeProxies();
      throw e;
    }
  }

  /** True when member i's process is running. */
  isRunning(i: number): boolean {
    return this.members[i].process.exitStatus() === null;
  }

  /** Indexes of running members. */
  running(): number[] {
    return this.svc.running();
  }

  /** Sends SIGKILL or SIGTERM to member i and waits for the exit. */
  async signal(i: number, sig: 'SIGKILL' | 'SIGTERM'): Promise<ExitStatus | undefined> {
    const m = this.members[i];
    if (!this.isRunning(i)) return undefined;
    const st = await (sig === 'SIGTERM' ? this.svc.stop(i) : this.svc.kill(i));
    if (sig === 'SIGTERM' && (st.code !== 0 || st.signal)) {
      m.crashes.push(`${m.name} did not exit cleanly on SIGTERM (${describeExit(st)})`);
    }
    return st;
  }

  /** Starts member i again (same data dir and flags), optionally as another release. */
  restart(i: number, version?: string): void {
    if (this.isRunning(i)) return;
    void this.svc.start(i, { version: version ?? this.members[i].version, waitHealthy: false });
  }

  /** Starts member i with the launcher's options (new cluster flags, a start that must be refused); waits for /health only if asked. */
  async startWith(i: number, o: StartMemberOptions): Promise<void> {
    await this.svc.start(i, { waitHealthy: false, ...o });
  }

  /** Member i's ID as the member itself reports it (decimal string). */
  memberId(i: number): Promise<string> {
    return this.svc.memberId(i);
  }

  /** The log of member i's current process. */
  currentLog(i: number): string {
    return this.svc.currentLog(i);
  }

  /** Waits for a single leader; returns its index. */
  waitLeader(timeoutMs = 30000): Promise<number> {
    return this.svc.leader(timeoutMs);
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
      if (Date.now() > deadline) throw new HarnessError('TIMEOUT', `not healthy within ${timeoutMs} ms: ${bad.join('; ')}`);
      await sleep(200);
    }
  }

  /** POST to member i's JSON gateway. */
  post(i: number, path: string, body: unknown, timeoutMs = 10000): Promise<GatewayAnswer> {
    return this.svc.post(i, path, body, timeoutMs);
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
    return this.svc.logTails(lines);
  }

  /** Stops everything; removes the temp dir unless keep. */
  async close(keep = false): Promise<void> {
    await this.svc.close({ keep });
    await Promise.all(this.members.map((m) => m.proxy.close()));
  }
}

function describeExit(st: ExitStatus): string {
  return st.signal ? `signal ${st.signal}` : `code ${st.code}`;
}
