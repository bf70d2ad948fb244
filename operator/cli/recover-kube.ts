// svc-operator recover <cluster> (also the kubectl plugin: kubectl svc recover <cluster>)
//   [--namespace NS | -n NS] [--kubeconfig FILE] [--dry-run] [--token T] [--wait SECONDS]
// Quorum-loss recovery of an SvcCluster, never automatic. Reads every member live at its pod address (applied index
// and revision from Maintenance.Status, which each member serves on its own without quorum; reachability), names
// the survivor (the highest applied index) and what each other member loses; then (without --dry-run) sets the
// annotation svc.dev/recover to a new token (GitOps users may write the same annotation in the manifest). The
// operator refuses a request on a cluster that has quorum (status.recovery.refused, a Warning Event RecoverRefused),
// and otherwise snapshots the survivor onto the backup claim, restarts it in place with --force-new-cluster (same
// pod name, Services, Secrets, client URLs), and grows back to spec.replicas; status.recovery shows the step and
// keeps the snapshot's location. This command refuses such a cluster itself before it writes anything.
// Exit codes: 0 planned (--dry-run), asked (or, with --wait, recovered), 1 refused or failed, 2 usage.
import type { SvcClusterStatus } from '../api/types.js';
import { recoveryLines, recoveryPlan, recoveryRefusal } from '../planner/recovery.js';
import type { ObservedCluster } from '../planner/types.js';
import { REQUESTS, requestsOf } from '../runtime/kubernetes/kube-records.js';
import { parseArgs, UsageError } from './args.js';
import { annotateRequest, awaitAnswer } from './kube-request.js';
import { contextNamespace, gatherView, loadKubeConfig, StatusError, type ClusterView } from './status-view.js';

/** The command's usage, as `prog` (svc-operator recover, kubectl svc recover) names it. */
export function recoverUsage(prog: string): string {
  return `${prog} <cluster> [--namespace NS] [--kubeconfig FILE] [--dry-run] [--token T] [--wait SECONDS]`;
}

export function isRecoverCommand(argv: readonly string[]): boolean {
  return argv[0] === 'recover';
}

/** The planner's view of the members as the on-call view read them. */
export function observedOf(view: ClusterView): ObservedCluster {
  return {
    now: view.at.getTime(),
    members: view.members.map((m) => ({
      name: m.name, configuredVersion: m.release ?? view.spec.version, running: m.reachable, healthy: m.healthy, leader: m.role === 'leader',
      ...(m.release !== undefined ? { release: m.release } : {}),
      ...(m.appliedIndex !== undefined ? { appliedIndex: m.appliedIndex } : {}),
      ...(m.revision !== undefined ? { revision: m.revision } : {}),
      // the view shows IDs in hex (as etcdctl does); the planner's are decimal
      ...(m.id !== undefined ? { id: BigInt(`0x${m.id}`).toString() } : {}),
      ...(m.dbSize !== undefined ? { dbSize: m.dbSize } : {}),
    })),
    ...(requestsOf(view.annotations ?? {}).suspended ? { suspended: true } : {}),
  };
}

/** argv[0] is the command word; `prog` names the command in messages. */
export async function recoverMain(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s), prog = 'svc-operator recover'): Promise<number> {
  const me = prog.slice(0, prog.lastIndexOf(' '));
  try {
    const { words, flags } = parseArgs(argv, { string: ['kubeconfig', 'namespace', 'token', 'wait'], boolean: ['dry-run'] });
    if (flags.has('help')) {
      out(`usage: ${recoverUsage(prog)}\n`);
      return 0;
    }
    if (words.length !== 2) throw new UsageError(`${prog} needs exactly one SvcCluster name`);
    const name = words[1];
    const waitText = flags.get('wait');
    if (waitText !== undefined && !/^\d+$/.test(waitText)) throw new UsageError('--wait must be a number of seconds');
    const kc = loadKubeConfig(flags.get('kubeconfig'));
    const namespace = flags.get('namespace') ?? contextNamespace(kc);
    const view = await gatherView(kc, namespace, name);
    const under = view.status.recovery;
    if (under && under.refused === undefined && under.finishedAt === undefined && under.request === view.recoverRequest) {
      out(`recovery ${under.request} of ${namespace}/${name} from ${under.survivor ?? '?'} is under way (step ${under.step ?? '?'}); \`${me} status ${name}\` shows it\n`);
      return 0;
    }
    const observed = observedOf(view);
    const refusal = recoveryRefusal(observed, `${namespace}/${name}`);
    if (refusal) {
      process.stderr.write(`${me}: cannot recover ${namespace}/${name}: ${refusal}\n`);
      return 1;
    }
    for (const l of recoveryLines(recoveryPlan(observed))) out(`${l}\n`);
    if (flags.has('dry-run')) {
      out('dry run: nothing was touched; run without --dry-run to recover\n');
      return 0;
    }
    const token = flags.get('token') ?? new Date().toISOString();
    await annotateRequest(kc, namespace, name, REQUESTS.recover.annotation, token);
    out(`recovery of ${namespace}/${name} requested (annotation ${REQUESTS.recover.annotation}=${token}); status.recovery and \`${me} status ${name}\` show each step\n`);
    if (waitText === undefined) return 0;
    const mine = (s: SvcClusterStatus | undefined) => (s?.recovery?.request === token ? s.recovery : undefined);
    const w = await awaitAnswer(kc, namespace, name, Number(waitText), (s) => {
      const r = mine(s);
      return r && (r.refused !== undefined || r.finishedAt !== undefined) ? r : undefined;
    });
    if (w.answer?.refused !== undefined) {
      process.stderr.write(`${me}: the operator refused recovery ${token}: ${w.answer.refused}\n`);
      return 1;
    }
    if (w.answer) {
      out(`recovered from ${w.answer.survivor}; its snapshot before the recovery: ${w.answer.snapshot ?? '(not recorded)'}\n`);
      return 0;
    }
    const r = mine(w.status);
    process.stderr.write(`${me}: recovery ${token} not finished within ${waitText} s (step ${r ? r.step ?? '?' : 'not begun'})${w.status?.lastError ? `: ${w.status.lastError}` : ''}; \`${me} status ${name}\` shows where it is\n`);
    return 1;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${me}: ${e.message}\nusage: ${recoverUsage(prog)}\n`);
      return 2;
    }
    if (e instanceof StatusError) {
      process.stderr.write(`${me}: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`${me}: ${(e as Error).message}\n`);
    return 1;
  }
}
