// A real Kubernetes control plane for tests, started the way controller-runtime's envtest does it: the storage
// (an svc member by default, so every test here also tests svc as Kubernetes' storage; SVC_K8S_STORAGE=etcd for the
// etcd that was built with Kubernetes), then
// kube-apiserver on a free 127.0.0.1 port with a throwaway CA, RBAC authorization and a service-account key, then
// kube-controller-manager (StatefulSet controller, garbage collector, PV binder, ...), each checked by /healthz or
// /readyz. An admin kubeconfig is written to <workDir>/kubeconfig.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { binary, binDir as defaultBinDir, repoRoot, versions } from './binaries.js';
import { makePki, type Pki } from './pki.js';
import { HarnessError } from '../../harness/errors.js';
import { type LoggedProcess, runCommand, spawnLogged, waitFor } from '../../harness/process.js';
import { freePort } from '../../harness/ports.js';

/** Options of startControlPlane. */
export interface ControlPlaneOptions {
  /** Folder for data, certificates, kubeconfig and logs (created). */
  workDir: string;
  /** Folder with the binaries (default: the build cache). */
  binDir?: string;
  /** Extra kube-apiserver flags ("--name=value"). */
  apiServerFlags?: string[];
  /** What kube-apiserver stores its data in (default: storageFromEnv()). */
  storage?: StorageKind;
}

/** kube-apiserver's storage: a one-member svc cluster (this repository's bin/svc, the newest release) or etcd. */
export type StorageKind = 'svc' | 'etcd';

/** SVC_K8S_STORAGE: unset or "svc" -> svc, "etcd" -> the etcd built with Kubernetes; anything else is an error. */
export function storageFromEnv(env: NodeJS.ProcessEnv = process.env): StorageKind {
  const v = env.SVC_K8S_STORAGE ?? '';
  if (v === '' || v === 'svc') return 'svc';
  if (v === 'etcd') return 'etcd';
  throw new HarnessError('BAD_INPUT', `SVC_K8S_STORAGE=${v}: expected "svc" (the default) or "etcd"`);
}

/** A running control plane. */
export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Admin kubeconfig (user svc-test-admin in system:masters). */
  readonly kubeconfigPath: string;
  readonly pki: Pki;
  /** Client URL of the storage member (svc or etcd, see `storage`). */
  readonly etcdUrl: string;
  readonly storage: StorageKind;
  readonly binDir: string;
  readonly logDir: string;
  /** Process ids of the storage member, kube-apiserver and kube-controller-manager. */
  readonly pids: number[];
  /** Runs the built kubectl against this control plane; resolves its stdout. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** Runs the built helm against this control plane; resolves its stdout. */
  helm(args: string[]): Promise<string>;
  /** GET path on the apiserver as admin (or with a bearer token); resolves status and body. */
  get(path: string, token?: string): Promise<{ status: number; body: string }>;
  /** Stops kube-controller-manager, kube-apiserver and the storage member (SIGTERM, then SIGKILL). */
  stop(): Promise<void>;
}

/** Writes a kubeconfig that points at server with a client certificate or a token. */
export function writeKubeconfig(path: string, server: string, caFile: string, user: { certFile: string; keyFile: string } | { token: string }): void {
  const creds = 'token' in user
    ? `    token: ${user.token}\n`
    : `    client-certificate: ${user.certFile}\n    client-key: ${user.keyFile}\n`;
  writeFileSync(path, `apiVersion: v1
kind: Config
clusters:
- name: svc-test
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
users:
- name: user
  user:
${creds}contexts:
- name: svc-test
  context:
    cluster: svc-test
    user: user
    namespace: default
current-context: svc-test
`);
}

function httpsGet(url: string, ca: Buffer, client?: { cert: Buffer; key: Buffer }, token?: string, insecure = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      ca, cert: client?.cert, key: client?.key, rejectUnauthorized: !insecure, timeout: 5000,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpOk(url: string): Promise<true | undefined> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  return res.ok ? true : undefined;
}

/** Starts the storage member, kube-apiserver and kube-controller-manager; resolves when all report healthy. */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const bins = opts.binDir ?? defaultBinDir();
  const work = opts.workDir;
  const logDir = join(work, 'logs');
  mkdirSync(logDir, { recursive: true });
  const started: LoggedProcess[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of [...started].reverse()) await p.stop();
  };
  try {
    const pki = await makePki(join(work, 'pki'));

    // the storage: one member without fsync (test data only)
    const storage = opts.storage ?? storageFromEnv();
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const memberFlags = ['--name=testbed', `--data-dir=${join(work, storage)}`,
      `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=testbed=${peerUrl}`, '--unsafe-no-fsync=true', '--log-level=warn'];
    const etcd = storage === 'etcd'
      ? spawnLogged(binary('etcd', bins), memberFlags, { logFile: join(logDir, 'etcd.log') })
      : spawnLogged(process.execPath, [join(repoRoot(), 'bin', 'svc'), ...memberFlags],
        { logFile: join(logDir, 'svc.log'), name: 'svc', env: { SVC_VERSION: '' } });
    started.push(etcd);
    await waitFor(`${storage} /health`, async () => {
      if (etcd.exitStatus()) throw new HarnessError('PROCESS_EXITED', `${storage} exited: see ${join(logDir, `${storage}.log`)}`);
      return httpOk(`${etcdUrl}/health`).catch(() => undefined);
    }, 60_000);

    // kube-apiserver (flags as envtest's defaults, with the ServiceAccount admission plugin left on because the
    // controller manager runs here and creates the default service accounts)
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const apiserver = spawnLogged(binary('kube-apiserver', bins), [
      `--etcd-servers=${etcdUrl}`, '--advertise-address=127.0.0.1', '--bind-address=127.0.0.1', `--secure-port=${port}`,
      `--cert-dir=${join(work, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.serverCert}`, `--tls-private-key-file=${pki.serverKey}`, `--client-ca-file=${pki.caCert}`,
      // Node: the test node's kubelet acts as system:node:<name>; NodeRestriction keeps it to its own objects
      '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction',
      '--allow-privileged=true', '--service-cluster-ip-range=10.0.0.0/24',
      // kubectl logs/exec reach the kubelet at the node's InternalIP, as the admin
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${pki.adminCert}`, `--kubelet-client-key=${pki.adminKey}`,
      `--service-account-issuer=${server}/`, `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      '--enable-priority-and-fairness=false', '--profiling=false',
      // the apiserver would keep trying to publish 127.0.0.1 as the "kubernetes" endpoint, which validation refuses
      '--endpoint-reconciler-type=none',
      ...(opts.apiServerFlags ?? []),
    ], { logFile: join(logDir, 'kube-apiserver.log') });
    started.push(apiserver);
    const ca = readFileSync(pki.caCert);
    const admin = { cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) };
    const get = (path: string, token?: string): Promise<{ status: number; body: string }> =>
      httpsGet(server + path, ca, token ? undefined : admin, token);
    await waitFor('kube-apiserver /readyz', async () => {
      if (apiserver.exitStatus()) throw new HarnessError('PROCESS_EXITED', `kube-apiserver exited: see ${join(logDir, 'kube-apiserver.log')}`);
      return (await get('/readyz')).status === 200 ? true : undefined;
    }, 120_000);

    const kubeconfigPath = join(work, 'kubeconfig');
    writeKubeconfig(kubeconfigPath, server, pki.caCert, { certFile: pki.adminCert, keyFile: pki.adminKey });
    const kcmConfig = join(work, 'kube-controller-manager.kubeconfig');
    writeKubeconfig(kcmConfig, server, pki.caCert, { certFile: pki.kcmCert, keyFile: pki.kcmKey });

    // kube-controller-manager: all default controllers, each with its own service account's credentials
    const kcmPort = await freePort();
    const kcm = spawnLogged(binary('kube-controller-manager', bins), [
      `--kubeconfig=${kcmConfig}`, `--authentication-kubeconfig=${kcmConfig}`, `--authorization-kubeconfig=${kcmConfig}`,
      '--bind-address=127.0.0.1', `--secure-port=${kcmPort}`, `--cert-dir=${join(work, 'kcm-certs')}`,
      '--controllers=*', '--use-service-account-credentials=true', '--leader-elect=false',
      `--service-account-private-key-file=${pki.saKey}`, `--root-ca-file=${pki.caCert}`,
      `--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`,
      '--cluster-name=svc-test', '--concurrent-statefulset-syncs=5',
    ], { logFile: join(logDir, 'kube-controller-manager.log') });
    started.push(kcm);
    await waitFor('kube-controller-manager /healthz', async () => {
      if (kcm.exitStatus()) throw new HarnessError('PROCESS_EXITED', `kube-controller-manager exited: see ${join(logDir, 'kube-controller-manager.log')}`);
      return (await httpsGet(`https://127.0.0.1:${kcmPort}/healthz`, ca, undefined, undefined, true)).status === 200 ? true : undefined;
    }, 120_000);
    // the service-account controller makes "default" in each namespace; pods need it (ServiceAccount admission)
    await waitFor('default service account', async () =>
      (await get('/api/v1/namespaces/default/serviceaccounts/default')).status === 200 ? true : undefined, 120_000);

    const env = { ...process.env, KUBECONFIG: kubeconfigPath, HELM_CACHE_HOME: join(work, 'helm', 'cache'),
      HELM_CONFIG_HOME: join(work, 'helm', 'config'), HELM_DATA_HOME: join(work, 'helm', 'data') };
    return {
      server, kubeconfigPath, pki, etcdUrl, storage, binDir: bins, logDir, get,
      pids: started.map((p) => p.pid),
      kubectl: async (args, input) => (await runCommand([binary('kubectl', bins), ...args], { env, input })).stdout,
      helm: async (args) => (await runCommand([binary('helm', bins), ...args], { env })).stdout,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** The release the control plane is pinned to (e.g. v1.34.4). */
export function pinnedVersion(): string {
  return versions().k8s;
}
