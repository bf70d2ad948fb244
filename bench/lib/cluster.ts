// Three-member clusters for the put benchmark: svc members (node processes running this build's
// server/cli/svc.js with the reference's flags) and reference etcd members (through the test helper),
// behind one small interface so the load generator cannot tell them apart.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../server/api/grpc-services.js';
import { freePorts } from '../../harness/ports.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from '../../harness/process.js';
import { startReferenceCluster } from '../../harness/reference-cluster.js';

/** One member of a cluster under test. */
export interface BenchMember {
  name: string;
  /** 127.0.0.1:<client port>, a gRPC target. */
  endpoint: string;
  pid: number;
  process: LoggedProcess;
}

/** A running cluster under test. */
export interface BenchCluster {
  /** 'svc' or 'etcd'. */
  system: string;
  members: BenchMember[];
  /** Where data dirs, logs (and CPU profiles) live. */
  dir: string;
  /** The member that leads now (asked over Maintenance.Status). */
  leader(): Promise<BenchMember>;
  /** Stops every member; resolves with the CPU profiles written (empty unless profiling). */
  stop(): Promise<string[]>;
}

/** Raised when a cluster cannot be started or has no leader. */
export class BenchClusterError extends Error {
  readonly code: 'START_FAILED' | 'NO_LEADER';
  constructor(code: 'START_FAILED' | 'NO_LEADER', message: string) {
    super(message);
    this.name = 'BenchClusterError';
    this.code = code;
  }
}

export interface SvcClusterOptions {
  size?: number;
  /** SVC_VERSION of the members. Default 3.4.34 (the release matching the reference 3.4). */
  version?: string;
  /** Write a V8 CPU profile per member (node --cpu-prof) into <dir>/profiles. */
  cpuProfile?: boolean;
  /** Extra environment for every member (added to this process's). */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Another build output folder (holding server/cli/svc.js) to run instead of this build, for A/B runs. */
  buildDir?: string;
  /** The system name the cluster reports (default "svc"). */
  system?: string;
}

// The compiled file sits at <outDir>/bench/lib/cluster.js; the server entry at <outDir>/server/cli/svc.js.
const SVC_ENTRY = new URL('../../server/cli/svc.js', import.meta.url).href;

/** Starts an N-member svc cluster from this build and waits until every member answers /health. */
export async function startSvcCluster(opts: SvcClusterOptions = {}): Promise<BenchCluster> {
  const size = opts.size ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const profileDir = join(dir, 'profiles');
  if (opts.cpuProfile) mkdirSync(profileDir);
  const ports = await freePorts(2 * size);
  const token = `bench-${process.pid}-${Date.now().toString(36)}`;
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `m${i + 1}`,
    client: `http://127.0.0.1:${ports[2 * i]}`,
    peer: `http://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peer}`).join(',');
  const members: BenchMember[] = [];
  const stopAll = () => Promise.all(members.map((m) => m.process.stop('SIGTERM', 15000)));
  try {
    for (const s of specs) {
      const dataDir = join(dir, `${s.name}.data`);
      const argv = [
        '--name', s.name,
        '--data-dir', dataDir,
        '--listen-client-urls', s.client,
        '--advertise-client-urls', s.client,
        '--listen-peer-urls', s.peer,
        '--initial-advertise-peer-urls', s.peer,
        '--initial-cluster', initialCluster,
        '--initial-cluster-token', token,
        '--initial-cluster-state', 'new',
      ];
      // process.exit (not exitCode) so the process ends even if a handle lingers, and --cpu-prof still writes.
      const entry = opts.buildDir ? pathToFileURL(join(resolve(opts.buildDir), 'server/cli/svc.js')).href : SVC_ENTRY;
      const script = `import { main } from ${JSON.stringify(entry)};\nmain(${JSON.stringify(argv)}).then((c) => process.exit(typeof c === 'number' ? c : 0));`;
      const nodeArgs = opts.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${s.name}.cpuprofile`] : [];
      const proc = spawnLogged(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
        logFile: join(dir, `${s.name}.log`),
        name: `svc ${s.name}`,
        env: { ...opts.env, SVC_VERSION: opts.version ?? '3.4.34' },
      });
      members.push({ name: s.name, endpoint: s.client.slice('http://'.length), pid: proc.pid, process: proc });
    }
    const timeoutMs = opts.timeoutMs ?? 60000;
    await Promise.all(members.map((m) => waitForHttp(`http://${m.endpoint}/health`, { timeoutMs, process: m.process })));
  } catch (e) {
    await stopAll();
    throw new BenchClusterError('START_FAILED', `svc cluster did not start (logs in ${dir}): ${(e as Error).message}`);
  }
  return {
    system: opts.system ?? 'svc',
    members,
    dir,
    leader: () => findLeader(members),
    async stop() {
      await stopAll();
      const profiles = opts.cpuProfile ? readdirSync(profileDir).map((n) => join(profileDir, n)) : [];
      if (!opts.cpuProfile && process.env.SVC_TEST_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
      return profiles;
    },
  };
}

/** Starts an N-member reference etcd cluster (ETCD_BIN, default /usr/bin/etcd). */
export async function startEtcdCluster(size = 3): Promise<BenchCluster> {
  const ref = await startReferenceCluster({ size });
  const members: BenchMember[] = ref.members.map((m) => ({ name: m.name, endpoint: m.endpoint, pid: m.process.pid, process: m.process }));
  return {
    system: 'etcd',
    members,
    dir: ref.dir,
    leader: () => findLeader(members),
    async stop() {
      await ref.stop();
      return [];
    },
  };
}

interface StatusResponse {
  header: { member_id: string } | null;
  leader: string;
}

/** Asks each member's Maintenance.Status until one reports itself as leader (retrying up to ~10 s). */
export async function findLeader(members: BenchMember[], timeoutMs = 10000): Promise<BenchMember> {
  const { Maintenance } = loadClients();
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    for (const m of members) {
      const client = new Maintenance(m.endpoint, grpc.credentials.createInsecure());
      try {
        const st = await new Promise<StatusResponse>((resolve, reject) => {
          client.Status({}, { deadline: Date.now() + 2000 }, (err: grpc.ServiceError | null, res: StatusResponse) =>
            err ? reject(err) : resolve(res),
          );
        });
        if (st.header && st.leader !== '0' && st.header.member_id === st.leader) return m;
        last = `${m.name}: leader ${st.leader}`;
      } catch (e) {
        last = `${m.name}: ${(e as Error).message}`;
      } finally {
        client.close();
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new BenchClusterError('NO_LEADER', `no member reported itself leader within ${timeoutMs} ms (last: ${last})`);
}

/** The path of this module's build folder (for messages). */
export function outDir(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}
