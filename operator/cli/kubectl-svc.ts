// The kubectl plugin (bin/kubectl-svc; kubectl runs it for `kubectl svc ...` when it is on PATH):
//   kubectl svc status <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--watch] [--interval SECONDS] [--output json]
//   kubectl svc backup <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--wait SECONDS]   (an on-demand backup)
//   kubectl svc verify <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--wait SECONDS]   (a restore drill now)
//   kubectl svc recover <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--dry-run] [--wait SECONDS]   (quorum-loss recovery)
//   kubectl svc suspend|resume|defrag|compact|move-leader|restart|alarm|report <cluster> ...   (on call: cli/oncall-kube.ts)
//   kubectl svc backups <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--output json]   (restore points: cli/backups-kube.ts)
// kubectl does not hand its own flags to plugins: the kubeconfig comes from --kubeconfig, $KUBECONFIG or
// ~/.kube/config, the namespace from -n or the current context.
import { setProtoDir } from '../../server/wire/index.js';
import { statusMain, statusUsage } from './status-cmd.js';
import { backupNowMain, backupNowUsage } from './backup-now.js';
import { recoverMain, recoverUsage } from './recover-kube.js';
import { KUBE_ONCALL_USAGE, kubeOnCallMain } from './oncall-kube.js';
import { BACKUPS_USAGE, kubeBackupsMain } from './backups-kube.js';

const USAGE = `usage: kubectl svc <command>
  ${statusUsage('kubectl svc')}
  ${backupNowUsage('kubectl svc backup')}
      an on-demand backup (the operator takes it; --wait prints where it is)
  ${backupNowUsage('kubectl svc verify')}
      a restore drill of the newest backup now (a Job restores it into a scratch member and compares its KV hash
      with the one recorded at backup time); --wait prints the outcome, exit 1 when it failed
  ${recoverUsage('kubectl svc recover')}
      quorum-loss recovery, never automatic (refused while the cluster has quorum): the members' applied indexes,
      the survivor and what each other member loses; --dry-run stops there, else the annotation svc.dev/recover
  kubectl svc ${BACKUPS_USAGE}
${Object.entries(KUBE_ONCALL_USAGE).map(([verb, usage]) => `  kubectl svc ${verb} ${usage}\n`).join('')}`;

/** Runs the plugin with `argv` (without node and script); resolves with the exit code. */
export async function kubectlSvcMain(argv: string[]): Promise<number> {
  setProtoDir(process.env.SVC_PROTO_DIR);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    (argv.length === 0 ? process.stderr : process.stdout).write(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === 'status') return statusMain(argv, 'kubectl svc');
  if (argv[0] === 'backup') return backupNowMain(argv, undefined, 'kubectl svc backup');
  if (argv[0] === 'verify') return backupNowMain(argv, undefined, 'kubectl svc verify');
  if (argv[0] === 'recover') return recoverMain(argv, undefined, 'kubectl svc recover');
  if (argv[0] === 'backups') return kubeBackupsMain(argv);
  if (Object.hasOwn(KUBE_ONCALL_USAGE, argv[0])) return kubeOnCallMain(argv);
  process.stderr.write(`kubectl svc: unknown command ${argv[0]}\n${USAGE}`);
  return 2;
}
