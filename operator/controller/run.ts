// `svc-operator run`: the controller as a long-running process, with /healthz, /readyz and /metrics, JSON
// logs on stderr, and a graceful stop on SIGTERM/SIGINT (the step under way finishes first).
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Controller } from './controller.js';
import { LeaderElector } from './leader.js';

export interface RunOptions {
  /** Kubeconfig file; default: $KUBECONFIG, ~/.kube/config or the in-cluster service account. */
  kubeconfig?: string;
  /** Port of /healthz, /readyz, /metrics (0: none). Default 8080. */
  probePort?: number;
  /** Address the probe server binds. Default: every interface (a pod has its own network namespace). */
  probeAddress?: string;
  /** Act only while holding the Lease "svc-operator" in `podNamespace`. */
  leaderElect?: boolean;
  /** The namespace of the Lease (the CLI hands in $POD_NAMESPACE). Default "default". */
  podNamespace?: string;
  /** This replica's identity in the election, before a random suffix (the CLI hands in $POD_NAME). Default: the host name. */
  podName?: string;
  /** The operator's own image, which backup/restore Jobs run (the CLI: --operator-image, else $SVC_OPERATOR_IMAGE). */
  operatorImage?: string;
  /** Fault injection: a SVC_OPERATOR_CRASH_AT value (the CLI hands it in). */
  crashAt?: string;
  /** Lease name of the leader election. Default "svc-operator" (shards in one namespace need one each). */
  leaseName?: string;
  /** Watch only these namespaces; default all (controller/scope.ts). */
  namespaces?: string[];
  /** Reconcile only the SvcClusters this label selector matches. */
  clusterSelector?: string;
}

/** Loads a kubeconfig the usual way. */
export function loadKubeConfig(file?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

/** Serves the probes and metrics of a controller. */
export function probeServer(ctl: Controller, port: number, address?: string): Server {
  const srv = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200).end('ok');
    } else if (path === '/readyz') {
      res.writeHead(ctl.synced ? 200 : 503).end(ctl.synced ? 'ok' : 'informers not synced');
    } else if (path === '/metrics') {
      ctl.registry.metrics().then((text) => res.writeHead(200, { 'Content-Type': ctl.registry.contentType }).end(text), () => res.writeHead(500).end());
    } else {
      res.writeHead(404).end();
    }
  });
  srv.listen(port, address);
  return srv;
}

/** Runs the controller until SIGTERM or SIGINT. */
export async function runController(opts: RunOptions = {}): Promise<void> {
  const kc = loadKubeConfig(opts.kubeconfig);
  const ctl = new Controller(kc, {
    // every snapshot on Kubernetes is a Job onto a claim; the folder is only the runtime's fallback without Jobs
    snapshotDir: join(tmpdir(), 'svc-operator-snapshots'),
    operatorImage: opts.operatorImage,
    crashAt: opts.crashAt,
    namespaces: opts.namespaces,
    clusterSelector: opts.clusterSelector,
  });
  const port = opts.probePort ?? 8080;
  const srv = port > 0 ? probeServer(ctl, port, opts.probeAddress) : undefined;
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  const elector = opts.leaderElect
    ? new LeaderElector(kc, { namespace: opts.podNamespace ?? 'default', name: opts.leaseName, identity: `${opts.podName ?? hostname()}-${randomBytes(4).toString('hex')}` })
    : undefined;
  if (elector) {
    const lost = () => {
      // another replica may act now: stop at once and let the Deployment restart this one
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'leader election lost' })}\n`);
      process.exitCode = 1;
      stop();
    };
    await Promise.race([elector.acquire(lost), stopped]);
    if (!elector.leading) {
      await elector.release();
      srv?.close();
      return;
    }
  }
  await ctl.start();
  await stopped;
  await ctl.stop();
  await elector?.release();
  srv?.close();
}
