// svc-operator backup-agent: the backup agent of continuous backup (runtime/backup-agent.ts), runtime-independent: the local
// runtime runs it as a child process, a Kubernetes Deployment can run it with the operator image. Every setting is a
// flag, else an environment variable SVC_AGENT_<FLAG> (upper case, "-" as "_"), else a key of the JSON file --config
// (camelCase); the first found wins:
//   --cluster NAME            cluster (the folder under each destination's prefix)                     required
//   --endpoints URL,...       the members' client URLs                                                 required
//   --destinations JSON       spec.backup.destinations (its s3 entries are used)                       required
//   --segment-seconds N       a segment every N seconds (default 2)
//   --segment-events M        ... or every M events (default 1000)
//   --max-away DURATION       newest durable point older than this at start: a new full snapshot (default 1h)
//   --keep N / --max-age D    spec.backup.keep / maxAge, applied after a full snapshot of the agent's
//   --work-dir DIR            where full snapshots are staged (default the system's temp dir)
//   --status-file FILE        where the agent's status (JSON) is written after each change
//   --release V               recorded in full snapshots' manifests (default SVC_VERSION, else unknown)
//   --cacert F --cert F --key F   a TLS cluster's CA and client certificate
//   --credentials-secret NAME a cluster with authentication on: the secret with username and password
// S3 credentials: a destination's credentialsSecret in the secrets folder (SVC_OPERATOR_SECRETS_DIR/<name>/<key>,
// a mounted Secret), else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. SIGTERM or SIGINT: the
// pending segment is written and the agent exits 0. Exit 2: bad usage; 1: a destination cannot be opened.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupDestination } from '../api/types.js';
import { durationMs } from '../api/duration.js';
import { BackupAgent, type AgentStatus } from '../runtime/backup-agent.js';
import { DestinationError, openS3, userCredentials } from '../backup/destinations/index.js';
import { DEFAULT_KEEP } from '../backup/schedule.js';
import { parseArgs, readTlsFiles, UsageError } from './args.js';
import { envDestinationAccess } from './local.js';

export const AGENT_FLAGS = ['config', 'cluster', 'endpoints', 'destinations', 'segment-seconds', 'segment-events', 'max-away', 'keep', 'max-age', 'work-dir', 'status-file', 'release', 'cacert', 'cert', 'key', 'credentials-secret'] as const;
type Flag = (typeof AGENT_FLAGS)[number];

const USAGE = `usage: svc-operator backup-agent --cluster NAME --endpoints URL,... --destinations JSON [--config FILE]
         [--segment-seconds N] [--segment-events M] [--max-away DURATION] [--keep N] [--max-age DURATION]
         [--work-dir DIR] [--status-file FILE] [--release V] [--cacert F --cert F --key F] [--credentials-secret NAME]
  each flag also as SVC_AGENT_<FLAG> (e.g. SVC_AGENT_ENDPOINTS) or a camelCase key of the JSON --config file
`;

/** The environment variable of a flag: SVC_AGENT_SEGMENT_SECONDS for segment-seconds. */
export function agentEnvName(flag: string): string {
  return `SVC_AGENT_${flag.toUpperCase().replace(/-/g, '_')}`;
}

const camel = (flag: string) => flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** The agent's settings, resolved: flag, else environment, else config file. */
export function agentSettings(flags: Map<string, string>, env: NodeJS.ProcessEnv): (f: Flag) => unknown {
  const file = flags.get('config') ?? env[agentEnvName('config')];
  let conf: Record<string, unknown> = {};
  if (file) {
    try {
      conf = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`--config ${file}: ${(e as Error).message}`);
    }
  }
  return (f) => flags.get(f) ?? env[agentEnvName(f)] ?? conf[camel(f)];
}

function positive(v: unknown, flag: string, dflt: number): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} must be a positive number, not ${JSON.stringify(v)}`);
  return n;
}

/** Writes the status atomically (a reader never sees half of it). */
function writeStatus(file: string, s: AgentStatus): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...s, updated: new Date().toISOString() })}\n`);
  renameSync(tmp, file);
}

/** Runs the agent until SIGTERM/SIGINT; resolves with the exit code. */
export async function backupAgentMain(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let agent: BackupAgent;
  try {
    const { words, flags } = parseArgs(argv, { string: [...AGENT_FLAGS] });
    if (flags.has('help')) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (words.length !== 1) throw new UsageError(`unexpected arguments: ${words.slice(1).join(' ')}`);
    const get = agentSettings(flags, env);
    const str = (f: Flag) => {
      const v = get(f);
      return v === undefined || v === '' ? undefined : String(v);
    };
    const cluster = str('cluster');
    if (!cluster) throw new UsageError(`--cluster (or ${agentEnvName('cluster')}) is required`);
    const ep = get('endpoints');
    const endpoints = (Array.isArray(ep) ? ep.map(String) : String(ep ?? '').split(',')).map((s) => s.trim()).filter(Boolean);
    if (endpoints.length === 0) throw new UsageError(`--endpoints (or ${agentEnvName('endpoints')}) is required: the members' client URLs`);
    let dests = get('destinations');
    if (typeof dests === 'string') {
      try {
        dests = JSON.parse(dests) as unknown;
      } catch (e) {
        throw new UsageError(`--destinations is not JSON: ${(e as Error).message}`);
      }
    }
    const s3 = (Array.isArray(dests) ? (dests as BackupDestination[]) : []).filter((d) => d && typeof d.name === 'string' && d.s3);
    if (s3.length === 0) throw new UsageError('--destinations names no s3 destination (a JSON list as spec.backup.destinations)');
    const tls = readTlsFiles([str('cacert'), str('cert'), str('key')]);
    const access = envDestinationAccess();
    const secret = str('credentials-secret');
    let auth: { username: string; password: string } | undefined;
    if (secret) {
      auth = userCredentials(access.secrets, secret);
      if (!auth) throw new UsageError(`--credentials-secret ${secret} has no username and password in ${access.secretsWhere!(secret)}`);
    }
    const maxAwayText = str('max-away') ?? '1h';
    const maxAwayMs = durationMs(maxAwayText);
    if (!maxAwayMs) throw new UsageError(`--max-away "${maxAwayText}" is not a duration (e.g. 1h, 90m)`);
    const maxAge = str('max-age');
    if (maxAge !== undefined && !durationMs(maxAge)) throw new UsageError(`--max-age "${maxAge}" is not a duration (e.g. 168h, 7d)`);
    const statusFile = str('status-file');
    const log = (line: string) => process.stdout.write(`${new Date().toISOString()} backup-agent ${cluster}: ${line}\n`);
    const destinations = s3.map((d) => openS3(d.name, d.s3!, access));
    agent = new BackupAgent({
      cluster, endpoints, destinations, tls, auth, log,
      reopen: () => s3.map((d) => openS3(d.name, d.s3!, envDestinationAccess())),
      segmentMs: positive(get('segment-seconds'), 'segment-seconds', 2) * 1000,
      segmentEvents: Math.ceil(positive(get('segment-events'), 'segment-events', 1000)),
      maxAwayMs,
      retention: { keep: Math.ceil(positive(get('keep'), 'keep', DEFAULT_KEEP)), ...(maxAge ? { maxAge } : {}) },
      workDir: str('work-dir') ?? join(tmpdir(), `svc-backup-agent-${cluster}`),
      release: str('release') ?? env.SVC_VERSION ?? 'unknown',
      ...(statusFile ? { onStatus: (s: AgentStatus) => writeStatus(statusFile, s) } : {}),
    });
    log(`started: ${endpoints.join(',')} -> ${destinations.map((d) => d.store.label).join(', ')}`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`svc-operator backup-agent: ${e.message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof DestinationError) {
      process.stderr.write(`svc-operator backup-agent: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  const stop = () => agent.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await agent.run();
  process.stdout.write(`${new Date().toISOString()} backup-agent: stopped\n`);
  return 0;
}
