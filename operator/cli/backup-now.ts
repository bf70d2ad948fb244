// svc-operator backup-now <cluster> (also the kubectl plugin: kubectl svc backup <cluster>) [--namespace NS | -n NS] [--kubeconfig FILE] [--token T] [--wait SECONDS]
//   asks the operator for an on-demand backup of an SvcCluster: sets its svc.dev/backup-request annotation to a new
//   token (default: the current time); the operator takes the backup once the cluster is steady and records the
//   token in status.backups.lastRequest. With --wait, waits that long for it and prints the backup's location.
// svc-operator verify-now <cluster> (kubectl svc verify <cluster>), the same flags: a restore drill of the newest
//   backup (annotation svc.dev/verify-request, answered in status.backups.lastVerifyRequest); --wait prints its
//   outcome and exits 1 when the drill failed.
// Exit codes: 0 asked (or, with --wait, taken / passed), 1 failure (no such cluster, not taken in time, drill failed), 2 usage.
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, PLURAL, type SvcClusterStatus } from '../api/types.js';
import { BACKUP_REQUEST_ANNOTATION } from '../backup/schedule.js';
import { describeVerified, VERIFY_REQUEST_ANNOTATION } from '../backup/verify.js';
import { isStatus, KubeApi } from '../runtime/kubernetes/kube-api.js';
import { parseArgs, UsageError } from './args.js';

const [GROUP, VERSION] = API_VERSION.split('/');
/** The command's usage line, as `prog` (svc-operator backup-now, kubectl svc backup) names it. */
export function backupNowUsage(prog: string): string {
  return `${prog} <cluster> [--namespace NS] [--kubeconfig FILE] [--token T] [--wait SECONDS]`;
}

export function isBackupNowCommand(argv: readonly string[]): boolean {
  return argv[0] === 'backup-now' || argv[0] === 'verify-now';
}

/** What is asked: a backup, or a restore drill (argv[0] verify-now, or `verify` through kubectl svc). */
interface Ask {
  what: string;
  annotation: string;
  /** The answer to `token` once the status has one: the line to print, and whether it is a success. */
  answer(b: NonNullable<SvcClusterStatus['backups']>, token: string): { ok: boolean; line: string } | undefined;
}

const BACKUP: Ask = {
  what: 'backup',
  annotation: BACKUP_REQUEST_ANNOTATION,
  answer: (b, token) => {
    if (b.lastRequest !== token) return undefined;
    const entry = [...(b.items ?? [])].reverse().find((x) => x.kind === 'on-demand');
    return { ok: true, line: `taken: ${entry?.location ?? '(pruned already)'}` };
  },
};

const VERIFY: Ask = {
  what: 'restore drill',
  annotation: VERIFY_REQUEST_ANNOTATION,
  answer: (b, token) => (b.lastVerifyRequest === token && b.lastVerified ? { ok: b.lastVerified.result === 'Passed', line: `restore drill ${describeVerified(b.lastVerified)}` } : undefined),
};

/** argv[0] is the command word; `prog` names the command in messages. */
export async function backupNowMain(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s), prog = 'svc-operator backup-now'): Promise<number> {
  const me = prog.slice(0, prog.lastIndexOf(' '));
  try {
    const { words, flags } = parseArgs(argv, { string: ['kubeconfig', 'namespace', 'token', 'wait'] });
    if (words.length !== 2) throw new UsageError(`${prog} needs exactly one SvcCluster name`);
    const name = words[1];
    const ask = words[0] === 'verify-now' || words[0] === 'verify' ? VERIFY : BACKUP;
    const waitText = flags.get('wait');
    if (waitText !== undefined && !/^\d+$/.test(waitText)) throw new UsageError('--wait must be a number of seconds');
    const kc = new k8s.KubeConfig();
    const file = flags.get('kubeconfig') ?? process.env.KUBECONFIG;
    if (file) kc.loadFromFile(file);
    else kc.loadFromDefault();
    const namespace = flags.get('namespace') ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
    const token = flags.get('token') ?? new Date().toISOString();
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    try {
      await new KubeApi(kc).patchClusterAnnotation(namespace, name, ask.annotation, token);
    } catch (e) {
      if (isStatus(e, 404)) {
        process.stderr.write(`${me}: SvcCluster ${namespace}/${name} not found\n`);
        return 1;
      }
      throw e;
    }
    out(`${ask.what} of ${namespace}/${name} requested (token ${token})\n`);
    if (waitText === undefined) return 0;
    const until = Date.now() + Number(waitText) * 1000;
    for (;;) {
      const c = await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }) as { status?: SvcClusterStatus };
      const b = c.status?.backups;
      const answer = b && ask.answer(b, token);
      if (answer) {
        out(`${answer.line}\n`);
        return answer.ok ? 0 : 1;
      }
      if (Date.now() > until) {
        const why = c.status?.lastError ? `: ${c.status.lastError}` : '';
        process.stderr.write(`${me}: the ${ask.what} was not ${ask === BACKUP ? 'taken' : 'run'} within ${waitText} s${why}\n`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${me}: ${e.message}\nusage: ${backupNowUsage(prog)}\n`);
      return 2;
    }
    process.stderr.write(`${me}: ${(e as Error).message}\n`);
    return 1;
  }
}
