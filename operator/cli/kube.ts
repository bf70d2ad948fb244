// The Kubernetes commands of svc-operator:
//   svc-operator crd                       prints the SvcCluster CRD (YAML), generated from operator/api/types.ts
//   svc-operator run [--kubeconfig FILE] [--probe-port N] [--probe-address IP] [--leader-elect=true]
//                    [--operator-image IMAGE] [--namespaces NS,NS] [--cluster-selector SELECTOR] [--lease-name NAME]
//                                          runs the controller until SIGTERM/SIGINT
import { svcClusterCrdYaml } from '../api/crd.js';
import { runController } from '../controller/run.js';
import { parseArgs, UsageError } from './args.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// key, optional operator and values: `a=b`, `a!=b`, `a in (b,c)`, `a notin (b)`, `a`, `!a` (the apiserver has the last word)
const REQUIREMENT = /^\s*(!?[A-Za-z0-9][-A-Za-z0-9_./]*)\s*((==?|!=)\s*[-A-Za-z0-9_.]*|\s+(in|notin)\s*\([-A-Za-z0-9_.,\s]*\))?\s*$/;

/** Parses `--namespaces a,b` (DNS labels, no duplicates). */
export function parseNamespaces(text: string | undefined): string[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const list = text.split(',').map((s) => s.trim());
  for (const ns of list) {
    if (!DNS_LABEL.test(ns) || ns.length > 63) throw new UsageError(`--namespaces: "${ns}" is not a namespace name`);
  }
  if (new Set(list).size !== list.length) throw new UsageError('--namespaces: a namespace is listed twice');
  return list;
}

/** Checks the shape of `--cluster-selector` (each comma-separated requirement); the apiserver parses it for real. */
export function parseClusterSelector(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  // split at commas outside parentheses
  const parts = text.split(/,(?![^(]*\))/);
  for (const p of parts) {
    if (!REQUIREMENT.test(p)) throw new UsageError(`--cluster-selector: "${p.trim()}" is not a label selector requirement`);
  }
  return text.trim();
}

/** True when argv names a Kubernetes command (main.ts hands those to kubeMain). */
export function isKubeCommand(argv: readonly string[]): boolean {
  return argv[0] === 'crd' || argv[0] === 'run';
}

/** Runs `crd` or `run`; resolves with the exit code. */
export async function kubeMain(argv: string[]): Promise<number> {
  try {
    const { words, flags } = parseArgs(argv, { string: ['kubeconfig', 'probe-port', 'probe-address', 'leader-elect', 'operator-image', 'namespaces', 'cluster-selector', 'lease-name'] });
    if (words[0] === 'crd' && words.length === 1) {
      process.stdout.write(svcClusterCrdYaml());
      return 0;
    }
    if (words[0] === 'run' && words.length === 1) {
      const port = flags.get('probe-port');
      if (port !== undefined && !/^\d+$/.test(port)) throw new UsageError('--probe-port must be a port number');
      const elect = flags.get('leader-elect') ?? 'false';
      if (elect !== 'true' && elect !== 'false') throw new UsageError('--leader-elect must be true or false');
      await runController({
        kubeconfig: flags.get('kubeconfig'),
        probePort: port === undefined ? undefined : Number(port),
        probeAddress: flags.get('probe-address') || undefined,
        leaderElect: elect === 'true',
        // the environment is read here only (the pod's downward API and the chart's values)
        operatorImage: flags.get('operator-image') ?? (process.env.SVC_OPERATOR_IMAGE || undefined),
        podNamespace: process.env.POD_NAMESPACE,
        podName: process.env.POD_NAME,
        crashAt: process.env.SVC_OPERATOR_CRASH_AT,
        // the scope: every namespace or listed ones, all clusters or those a label selector matches (shards)
        namespaces: parseNamespaces(flags.get('namespaces')),
        clusterSelector: parseClusterSelector(flags.get('cluster-selector')),
        leaseName: flags.get('lease-name') || undefined,
      });
      return 0;
    }
    throw new UsageError(`unknown command: ${words.join(' ')}`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`svc-operator: ${e.message}\nusage: svc-operator crd | svc-operator run [--kubeconfig FILE] [--probe-port N] [--probe-address IP] [--leader-elect=true] [--operator-image IMAGE] [--namespaces NS,NS] [--cluster-selector SELECTOR] [--lease-name NAME]\n`);
      return 2;
    }
    process.stderr.write(`svc-operator: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
