// `svc-operator status <cluster>` and the kubectl plugin `kubectl svc status <cluster>` (bin/kubectl-svc):
//   status <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--watch] [--interval SECONDS] [--output json]
// Exit codes: 0 shown, 1 the cluster or the apiserver could not be read (one line says why), 2 usage.
import { parseArgs, UsageError } from './args.js';
import { contextNamespace, gatherView, loadKubeConfig, renderView, StatusError } from './status-view.js';

/** Usage of the status command, for `prog` ("svc-operator" or "kubectl svc"). */
export function statusUsage(prog: string): string {
  return `${prog} status <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--watch] [--interval SECONDS] [--output json]
    the on-call view of an SvcCluster: members (role, release, health, raft index and lag, DB size, pod), alarms,
    versions, the upgrade or scaling under way, the last backup, certificate expiry, recent Events.
    Members are read live at their pod addresses (as the operator reads them, with the client Secret on TLS
    clusters); --watch redraws every --interval seconds (default 2) until Ctrl-C.
`;
}

/** Runs `status ...` (argv starts with "status"); resolves with the exit code. */
export async function statusMain(argv: string[], prog: string, out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout): Promise<number> {
  try {
    const { words, flags } = parseArgs(argv, { string: ['namespace', 'kubeconfig', 'interval', 'output'], boolean: ['watch'] });
    if (flags.has('help')) {
      out.write(statusUsage(prog));
      return 0;
    }
    if (words[0] !== 'status' || words.length !== 2) throw new UsageError(words.length < 2 ? 'status needs the name of an SvcCluster' : `unexpected arguments: ${words.slice(2).join(' ')}`);
    const output = flags.get('output') ?? 'text';
    if (output !== 'text' && output !== 'json') throw new UsageError(`--output must be text or json, not ${output}`);
    const interval = Number(flags.get('interval') ?? '2');
    if (!Number.isFinite(interval) || interval <= 0) throw new UsageError('--interval must be a positive number of seconds');
    const watch = flags.has('watch');
    const kc = loadKubeConfig(flags.get('kubeconfig'));
    const namespace = flags.get('namespace') ?? contextNamespace(kc);
    const name = words[1];
    const show = async (): Promise<void> => {
      const view = await gatherView(kc, namespace, name);
      const text = output === 'json' ? `${JSON.stringify(view, null, 2)}\n` : renderView(view);
      if (watch && out.isTTY) out.write('\x1b[H\x1b[2J');
      if (watch) out.write(`Every ${interval}s: ${prog} status ${name} -n ${namespace}    ${view.at.toISOString()}\n\n`);
      out.write(text);
      if (watch && !out.isTTY) out.write('\n');
    };
    await show();
    if (!watch) return 0;
    let stop = false;
    const onSignal = () => { stop = true; };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      while (!stop) {
        await new Promise((r) => setTimeout(r, interval * 1000));
        if (stop) break;
        // a failed refresh is shown and the watch goes on (the apiserver may come back)
        await show().catch((e: unknown) => { out.write(`${prog}: ${(e as Error).message}\n`); });
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${prog}: ${e.message}\nusage: ${statusUsage(prog)}`);
      return 2;
    }
    if (e instanceof StatusError) {
      process.stderr.write(`${prog}: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`${prog}: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
