// svc-operator backup-now <cluster> (also the kubectl plugin: kubectl svc backup <cluster>) [--namespace NS | -n NS] [--kubeconfig FILE] [--token T] [--wait SECONDS]
//   asks the operator for an on-demand backup of an SvcCluster: sets its svc.dev/backup-request annotation to a new
//   token (default: the current time); the operator takes the backup once the cluster is steady and records the
//   token in status.backups.lastRequest. With --wait, waits that long for it and prints the backup's location.
// svc-operator verify-now <cluster> (kubectl svc verify <cluster>), the same flags: a restore drill of the newest
//   backup (annotation svc.dev/verify-request, answered in status.backups.lastVerifyRequest); --wait prints its
//   outcome and exits 1 when the drill failed.
// Exit codes: 0 asked (or, with --wait, taken / passed), 1 failure (no such cluster, not taken in time, drill failed), 2 usage.
import type { SvcClusterStatus } from '../api/types.js';
import { describeVerified } from '../backup/verify.js';
import { REQUESTS } from '../runtime/kubernetes/kube-records.js';
import { parseArgs, UsageError } from './args.js';
import { annotateRequest, awaitAnswer } from './kube-request.js';
import { contextNamespace, loadKubeConfig } from './status-view.js';

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
  annotation: REQUESTS.backup.annotation,
  answer: (b, token) => {
    if (b.lastRequest !== token) return undefined;
    const entry = [...(b.items ?? [])].reverse().find((x) => x.kind === 'on-demand');
    return { ok: true, line: `taken: ${entry?.location ?? '(pruned already)'}` };
  },
};

const VERIFY: Ask = {
  what: 'restore drill',
  annotation: REQUESTS.verify.annotation,
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
    const kc = loadKubeConfig(flags.get('kubeconfig'));
    const namespace = flags.get('namespace') ?? contextNamespace(kc);
    const token = flags.get('token') ?? new Date().toISOString();
    await annotateRequest(kc, namespace, name, ask.annotation, token);
    out(`${ask.what} of ${namespace}/${name} requested (token ${token})\n`);
    if (waitText === undefined) return 0;
    const r = await awaitAnswer(kc, namespace, name, Number(waitText), (s) => s?.backups && ask.answer(s.backups, token));
    if (r.answer) {
      out(`${r.answer.line}\n`);
      return r.answer.ok ? 0 : 1;
    }
    const why = r.status?.lastError ? `: ${r.status.lastError}` : '';
    process.stderr.write(`${me}: the ${ask.what} was not ${ask === BACKUP ? 'taken' : 'run'} within ${waitText} s${why}\n`);
    return 1;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${me}: ${e.message}\nusage: ${backupNowUsage(prog)}\n`);
      return 2;
    }
    process.stderr.write(`${me}: ${(e as Error).message}\n`);
    return 1;
  }
}
