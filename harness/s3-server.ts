// A real S3-compatible server for tests: versitygw (Apache-2.0) with its posix backend (a bucket is a folder of
// the server's root), built once from the Go module proxy by scripts/build-versitygw.sh (npm test's pretest runs
// it), listening on loopback (or another local address the tests choose, such as the k8s test node's bridge).
// stop() ends it and removes its root (SVC_TEST_KEEP=1 keeps it).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingPrerequisite } from './etcdctl.js';
import { freePorts } from './ports.js';
import { spawnLogged, waitForHttp, type LoggedProcess } from './process.js';

/** Where scripts/build-versitygw.sh puts the binary; SVC_TEST_S3_DIR overrides the folder, as in the script. */
export const S3_SERVER_DIR =
  process.env.SVC_TEST_S3_DIR || join(process.env.XDG_CACHE_HOME || join(process.env.HOME || '/root', '.cache'), 'svc', 'versitygw', 'v1.8.0');

export interface S3Server {
  /** http://<host>:<port> */
  endpoint: string;
  /** The root user's keys (the server's --access and --secret). */
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** The folder that holds the buckets (a bucket is a sub-folder, an object a file under it). */
  root: string;
  process: LoggedProcess;
  /** Creates a bucket (a folder of the root: the posix backend's buckets). */
  createBucket(name: string): void;
  stop(): Promise<void>;
}

export interface S3ServerOptions {
  /** Address to listen on. Default 127.0.0.1. */
  host?: string;
  /** Buckets to create before it starts. */
  buckets?: string[];
}

/** Starts versitygw on a free port; resolves once it answers HTTP. */
export async function startS3Server(opts: S3ServerOptions = {}): Promise<S3Server> {
  const bin = join(S3_SERVER_DIR, 'versitygw');
  if (!existsSync(bin)) throw missingPrerequisite(bin);
  const host = opts.host ?? '127.0.0.1';
  const [port] = await freePorts(1, host);
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3-'));
  const root = join(dir, 'root');
  // object metadata in a side folder: no extended attributes needed on the temp file system
  const meta = join(dir, 'meta');
  mkdirSync(root);
  mkdirSync(meta);
  const createBucket = (name: string) => mkdirSync(join(root, name), { recursive: true });
  for (const b of opts.buckets ?? []) createBucket(b);
  const accessKeyId = 'svctestaccess';
  const secretAccessKey = 'svctestsecret0123456789';
  const proc = spawnLogged(bin, ['--access', accessKeyId, '--secret', secretAccessKey, '--port', `${host}:${port}`, '--quiet', 'posix', '--sidecar', meta, root], {
    logFile: join(dir, 'versitygw.log'),
    name: 'versitygw',
  });
  const endpoint = `http://${host}:${port}`;
  // an anonymous request is answered (403) once it serves
  await waitForHttp(`${endpoint}/`, { status: 403, timeoutMs: 30_000, process: proc });
  return {
    endpoint, accessKeyId, secretAccessKey, region: 'us-east-1', root, process: proc, createBucket,
    async stop() {
      await proc.stop('SIGTERM', 5000);
      if (process.env.SVC_TEST_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    },
  };
}
