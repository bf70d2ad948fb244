// Three-member clusters for the put benchmark: svc members (node processes running this build's
// server/cli/svc.js with the reference's flags) and reference etcd members, both from harness/,
// behind one small interface so the load generator cannot tell them apart.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../server/wire/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { LoggedProcess } from '../../harness/process.js';
import { startReferenceCluster } from '../../harness/reference-cluster.js';
import { startSvcCluster as startHarnessCluster, type SvcCluster } from '../../harness/svc-cluster.js';

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
  /** Extra node flags for every member (V8 settings for an A/B). */
  nodeArgs?: string[];
}

/** Starts an N-member svc cluster from this build (through the test harness's one launcher) and waits until every member answers /health. */
export async function startSvcCluster(opts: SvcClusterOptions = {}): Promise<BenchCluster> {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const profileDir = join(scratch, 'profiles');
  if (opts.cpuProfile) mkdirSync(profileDir);
  let svc: SvcCluster;
  try {
    svc = await startHarnessCluster({
      size: opts.size ?? 3,
      version: opts.version ?? '3.4.34',
      env: opts.env,
      dataRoot: scratch,
      timeoutMs: opts.timeoutMs ?? 60000,
      entry: opts.buildDir ? join(resolve(opts.buildDir), 'server/cli/svc.js') : undefined,
      nodeArgs: (name) => [...(opts.nodeArgs ?? []), ...(opts.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [])],
    });
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    throw new HarnessError('START_FAILED', `svc cluster did not start: ${(e as Error).message}`);
  }
  const members: BenchMember[] = svc.members.map((m) => ({ name: m.name, endpoint: m.endpoint, pid: m.process.pid, process: m.process }));
  return {
    system: opts.system ?? 'svc',
    members,
    dir: svc.dir,
    leader: () => findLeader(members),
    async stop() {
      // SIGTERM, so that --cpu-prof writes its profile on the way out.
      await Promise.all(svc.members.map((_, i) => svc.stop(i)));
      await svc.close({ keep: opts.cpuProfile });
      const profiles = opts.cpuProfile ? readdirSync(profileDir).map((n) => join(profileDir, n)) : [];
      if (!opts.cpuProfile && process.env.SVC_TEST_KEEP !== '1') rmSync(scratch, { recursive: true, force: true });
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
  throw new HarnessError('NO_LEADER', `no member reported itself leader within ${timeoutMs} ms (last: ${last})`);
}

/** The path of this module's build folder (for messages). */
export function outDir(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}
