// What a continuous-backup test of the local runtime sets up, once: a real S3 server (versitygw) with a bucket and
// its credentials in a secrets folder, cluster `kv` with the backup agent writing to it, and the command-line calls
// such tests make (apply a manifest, a restore manifest from the bucket, the JSON listing, waiting for the agent).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { startS3Server, type S3Server } from '../../../harness/s3-server.js';
import { operatorCli } from './operator-cli.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const BUCKET = 'svc-backups';

export interface ContinuousFixture {
  dir: string;
  stateDir: string;
  secrets: string;
  /** The agent's environment (short segments: SVC_AGENT_SEGMENT_SECONDS). */
  env: NodeJS.ProcessEnv;
  rt: LocalRuntime;
  s3(): S3Server;
  /** Cluster kv, continuous backup to destination "offsite" (`extra`: more lines of spec.backup; `dest`: another
   *  endpoint, bucket or credentials Secret than the fixture's). */
  manifest(extra?: string[], dest?: Destination): string;
  /** Cluster `name` restored from the bucket (`target`: a line of spec.restore, e.g. `revision: 12`). */
  restoreManifest(name: string, target: string): string;
  apply(yaml: string, stateDir: string): ReturnType<typeof operatorCli>;
  /** `local backups --output json`: the destination's listing. */
  listing<T>(): Promise<T>;
  /** Waits until the agent reports `revision` durable. */
  durable(revision: number): Promise<void>;
}

/** What a manifest may change of the fixture's destination. */
export interface Destination {
  endpoint?: string;
  bucket?: string;
  secret?: string;
}

/** A second bucket, and a Secret "wrong" whose key the store refuses: for tests that move the destination. */
export const MOVED_BUCKET = 'svc-backups-moved';

/** Registers the suite's before and after hooks (S3 server, secrets; the cluster deleted, all removed). */
export function useContinuousBackup(name: string, prefix: string, segmentSeconds: string): ContinuousFixture {
  const dir = mkdtempSync(join(tmpdir(), `svc-op-${name}-`));
  const stateDir = join(dir, 'src');
  const secrets = join(dir, 'secrets');
  const env = { SVC_OPERATOR_SECRETS_DIR: secrets, SVC_AGENT_SEGMENT_SECONDS: segmentSeconds };
  const rt = new LocalRuntime({ stateDir });
  let s3: S3Server | undefined;
  const s3Yaml = (d: Destination = {}) => `{endpoint: "${d.endpoint ?? s3!.endpoint}", bucket: ${d.bucket ?? BUCKET}, prefix: ${prefix}, region: us-east-1, forcePathStyle: true, credentialsSecret: ${d.secret ?? 's3creds'}}`;

  before(async function () {
    s3 = await startS3Server({ buckets: [BUCKET, MOVED_BUCKET] });
    for (const [secret, key] of [['s3creds', s3.secretAccessKey], ['wrong', 'not-the-secret']]) {
      mkdirSync(join(secrets, secret), { recursive: true });
      writeFileSync(join(secrets, secret, 'accessKeyId'), s3.accessKeyId);
      writeFileSync(join(secrets, secret, 'secretAccessKey'), key);
    }
  });
  after(async function () {
    this.timeout(60_000);
    await rt.delete().catch(() => undefined);
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    dir, stateDir, secrets, env, rt,
    s3: () => s3!,
    manifest: (extra = [], dest = {}) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', 'metadata: {name: kv}', 'spec:', '  version: 3.5.21', '  replicas: 1',
      '  backup:', '    continuous: true', ...extra.map((l) => `    ${l}`), '    destinations:', `      - {name: offsite, s3: ${s3Yaml(dest)}}`, ''].join('\n'),
    restoreManifest: (n, target) => ['apiVersion: svc.dev/v1alpha1', 'kind: SvcCluster', `metadata: {name: ${n}}`, 'spec:', '  version: 3.5.21', '  replicas: 1',
      '  restore:', `    source: {s3: ${s3Yaml()}}`, `    ${target}`, ''].join('\n'),
    apply: (yaml, sd) => {
      const f = join(dir, `m-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(f, yaml);
      return operatorCli(['local', 'apply', '-f', f, '--state-dir', sd], env);
    },
    listing: async <T>() => {
      const r = await operatorCli(['local', 'backups', '--state-dir', stateDir, '--output', 'json'], env);
      expect(r.code, r.out).to.equal(0);
      return (JSON.parse(r.out) as { destinations: T[] }).destinations[0];
    },
    durable: async (revision) => {
      const until = Date.now() + 30_000;
      while ((rt.agentStatus()?.continuousRevision ?? 0) < revision) {
        if (Date.now() > until) throw new Error(`the agent did not make revision ${revision} durable: ${JSON.stringify(rt.agentStatus())}; its log: ${readFileSync(rt.agentLog(), 'utf8').slice(-2000)}`);
        await sleep(100);
      }
    },
  };
}
