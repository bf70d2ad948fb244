// Entry point of svc-operator (bin/svc-operator).
//   svc-operator local apply -f cluster.yaml [--state-dir DIR] [--output json]
//   svc-operator local status [--state-dir DIR] [--output json]
//   svc-operator local backup [--state-dir DIR] [--wait] [--output json]
//   svc-operator local verify-backup [--state-dir DIR] [--wait] [--output json]   (a restore drill)
//   svc-operator local backups [--state-dir DIR | -f cluster.yaml] [--output json]
//   svc-operator local delete [--state-dir DIR]
//   svc-operator local recover [--state-dir DIR] [--dry-run] [--output json]   (quorum-loss recovery: cli/recover.ts)
//   svc-operator local run [--state-dir DIR] [--listen HOST:PORT] [--dry-run]   (the long-running loop: cli/local-run.ts)
//   svc-operator local suspend|resume|move-leader|restart|alarm|report ...   (on call: cli/oncall.ts)
//   svc-operator demo [--state-dir DIR] [--keep]
//   svc-operator backup ... | restore ...   (what the operator's Jobs run: cli/backup.ts)
//   svc-operator backup-agent ...           (continuous backup's agent: cli/backup-agent.ts)
//   svc-operator crd | run ...              (Kubernetes: cli/kube.ts)
//   svc-operator status <cluster> ...       (the on-call view of an SvcCluster: cli/status-cmd.ts)
//   svc-operator backup-now <cluster> [-n NS] [--wait SECONDS]   (an on-demand backup: cli/backup-now.ts)
//   svc-operator verify-now <cluster> [-n NS] [--wait SECONDS]   (a restore drill now: cli/backup-now.ts)
//   svc-operator recover <cluster> [-n NS] [--dry-run] [--wait SECONDS]   (quorum-loss recovery: cli/recover-kube.ts)
//   svc-operator backups <cluster> [-n NS] [--output json]   (restore points in the object stores: cli/backups-kube.ts)
// Exit codes: 0 done, 1 failure (including a refused upgrade), 2 usage.
import { parseArgs, UsageError } from './args.js';
import { setProtoDir } from '../../server/wire/index.js';
import { CommandError, localApply, localBackup, localBackups, localDelete, localStatus, localVerifyBackup } from './local.js';
import { demo } from './demo.js';
import { DEFAULT_LISTEN, localRun } from './local-run.js';
import { RuntimeError } from '../runtime/runtime.js';
import { isKubeCommand, kubeMain } from './kube.js';
import { isJobCommand, jobMain } from './backup.js';
import { statusMain } from './status-cmd.js';
import { backupNowMain, isBackupNowCommand } from './backup-now.js';
import { localRecover } from './recover.js';
import { isRecoverCommand, recoverMain } from './recover-kube.js';
import { onCallUsage, onCallVerb } from './oncall.js';
import { KUBE_ONCALL_USAGE, kubeOnCallMain } from './oncall-kube.js';
import { bashCompletion, zshCompletion } from './completion.js';
import { BACKUPS_USAGE, kubeBackupsMain } from './backups-kube.js';
import { backupAgentMain } from './backup-agent.js';

const USAGE = `usage: svc-operator <command>

Kubernetes:
  svc-operator status <cluster> [-n NAMESPACE] [--kubeconfig FILE] [--watch] [--interval SECONDS] [--output json]
      the on-call view of an SvcCluster (also the kubectl plugin: kubectl svc status <cluster>)
  svc-operator backup-now <cluster> [--namespace NS] [--kubeconfig FILE] [--wait SECONDS]
      an on-demand backup (annotation svc.dev/backup-request; recorded in status.backups)
  svc-operator verify-now <cluster> [--namespace NS] [--kubeconfig FILE] [--wait SECONDS]
      a restore drill of the newest backup now (annotation svc.dev/verify-request; status.backups.lastVerified)
  svc-operator recover <cluster> [--namespace NS] [--kubeconfig FILE] [--dry-run] [--token T] [--wait SECONDS]
      after a lost quorum only (refused while the cluster has quorum; never automatic): lists every member with its
      applied index, revision and reachability, names the survivor and what each other member loses; then sets the
      annotation svc.dev/recover (a manifest may carry the same): the operator snapshots the survivor onto the backup
      claim, restarts it in place with --force-new-cluster and grows back to spec.replicas (status.recovery).
      Also the kubectl plugin: kubectl svc recover <cluster>
  svc-operator ${BACKUPS_USAGE}
      (also the kubectl plugin: kubectl svc backups <cluster>; the same listing as svc-operator local backups)
${Object.entries(KUBE_ONCALL_USAGE).map(([verb, usage]) => `  svc-operator ${verb} ${usage}\n`).join('')}      (also the kubectl plugin: kubectl svc suspend|resume|defrag|compact|move-leader|restart|alarm|report <cluster>)
  svc-operator run [--kubeconfig FILE] [--probe-port N] [--probe-address IP] [--leader-elect=true] [--lease-name NAME]
                   [--operator-image IMAGE] [--namespaces NS,...] [--cluster-selector SELECTOR]
      runs the controller until SIGTERM/SIGINT (what the chart's Deployment runs)
  svc-operator crd
      prints the SvcCluster CRD (YAML)
  svc-operator completion bash|zsh
      prints the shell completion of svc-operator and kubectl-svc (also in completions/)
  svc-operator backup --endpoint URL --member NAME --dir DIR --file NAME.db [--keep N] [--record FILE] [--cacert F --cert F --key F]
                      [--s3 JSON --cluster NAME --release X.Y.Z --kind KIND [--max-age DURATION]]
  svc-operator verify (--snapshot FILE | --s3 JSON --object MANIFEST-KEY --download DIR) --revision N --scratch DIR [--record FILE]
  svc-operator restore (--snapshot FILE | --s3 JSON --object KEY --download DIR) --members NAME=DATADIR,... --initial-cluster NAME=URL,... --initial-cluster-token TOKEN [--record FILE]
      what the operator's backup, restore-drill and restore Jobs run
  svc-operator backup-agent --cluster NAME --endpoints URL,... --destinations JSON [--config FILE] [--segment-seconds N]
                            [--segment-events M] [--max-away DURATION] [--status-file FILE] ...   (--help: every flag)
      continuous backup: watches every change after the newest full snapshot and writes delta segments to every
      object-store destination; a new full snapshot when compaction passes it (spec.backup.continuous runs it)

Local (members as child processes):
  svc-operator local apply -f <cluster.yaml> [--state-dir DIR] [--output json]
      creates or changes the cluster and reconciles it until steady (or blocked), then exits; while local run
      looks after the state dir, hands the spec over to it and waits until it settles (exit 0 steady, 1 not)
  svc-operator local run [--state-dir DIR] [--listen HOST:PORT] [--dry-run]
      looks after the cluster until SIGTERM/SIGINT (it finishes the step under way, then exits 0): takes up what
      local apply saves, starts a member whose process is gone, takes scheduled backups and drills when due;
      logs each step; /healthz and /metrics on --listen (loopback; default 127.0.0.1:0, a free port named in the
      first line). One loop per state dir (DIR/operator.lock, with its pid; a dead holder's is taken over, and the
      recorded step resumed). --dry-run prints what its first pass would do
  svc-operator local status [--state-dir DIR] [--output json]
      the members, the upgrade, the backups (KIND, TIME, FILE) and a failed backup's cause
  svc-operator local backup [--state-dir DIR] [--wait] [--output json]
      asks for an on-demand backup (a verified snapshot under DIR/backups/, and in every object-store destination);
      --wait takes it now
  svc-operator local verify-backup [--state-dir DIR] [--wait] [--output json]
      asks for a restore drill of the newest backup: restored into a scratch member (DIR/drill/, removed after), its
      KV hash at the backed-up revision compared with the one recorded at backup time; --wait runs it now (exit 1
      when it fails). spec.backup.verify.schedule runs drills on a schedule
  svc-operator local backups [--state-dir DIR | -f <cluster.yaml>] [--output json]
      the restore points in each object-store destination (spec.backup.destinations[].s3): every full snapshot,
      the oldest and newest restorable revision and time (-f: of a manifest's destinations and spec.restore.source,
      no cluster needed). Credentials: the folder <secrets dir>/<credentialsSecret>/
      (files accessKeyId, secretAccessKey; SVC_OPERATOR_SECRETS_DIR, default ~/.config/svc-operator/secrets), else
      AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
  svc-operator local delete [--state-dir DIR]
      stops the members and removes the state; backups/, snapshots/ and recovery/ stay
  svc-operator local recover [--state-dir DIR] [--dry-run] [--output json]
      after a lost quorum only (never automatic; refused while the cluster has quorum): lists every member with its
      applied index, revision and reachability, names the survivor (the highest applied index) and what each other
      member loses; then snapshots the survivor (DIR/recovery/), restarts it in place with --force-new-cluster (same
      name and client URL), and grows back to spec.replicas, the lost members joining again empty under their names.
      --dry-run prints the plan and touches nothing; run it again to resume a recovery that did not finish
  svc-operator demo [--state-dir DIR] [--keep]
On call (the same verbs as kubectl svc; --state-dir DIR as above):
${onCallUsage('svc-operator local', '[--state-dir DIR]')}The state dir defaults to ./.svc-local. Applying a manifest again with a new spec.version upgrades the cluster,
and takes a scheduled backup that is due (spec.backup.schedule, spec.backup.keep) and a due restore drill
(spec.backup.verify.schedule). spec.restore.snapshot naming a
backup file creates a new cluster from it; spec.restore.source (a destination or a bucket) with an optional revision
or time creates it from the newest full snapshot at or before that point.

svc-operator --help prints this; exit status 0 done, 1 failure (including a refused upgrade), 2 usage.
`;

/** Runs svc-operator with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  setProtoDir(process.env.SVC_PROTO_DIR);
  // the AWS SDK warns on Node 20 about its releases of 2027 (package-lock pins one that runs on 20): not the user's matter
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (isKubeCommand(argv)) return kubeMain(argv); // svc-operator crd | run (cli/kube.ts)
  if (argv[0] === 'status') return statusMain(argv, 'svc-operator'); // the on-call view (cli/status-cmd.ts)
  if (argv[0] === 'backup-agent') return backupAgentMain(argv); // continuous backup (cli/backup-agent.ts)
  if (isJobCommand(argv)) return jobMain(argv); // svc-operator backup | restore, run by the operator's Jobs (cli/backup.ts)
  if (isBackupNowCommand(argv)) return backupNowMain(argv); // svc-operator backup-now <cluster> (cli/backup-now.ts)
  if (isRecoverCommand(argv)) return recoverMain(argv); // svc-operator recover <cluster> (cli/recover-kube.ts)
  if (argv[0] === 'backups') return kubeBackupsMain(argv); // svc-operator backups <cluster> (cli/backups-kube.ts)
  if (Object.hasOwn(KUBE_ONCALL_USAGE, argv[0] ?? '')) return kubeOnCallMain(argv);
  if (argv[0] === 'completion' && argv.length === 2 && (argv[1] === 'bash' || argv[1] === 'zsh')) {
    process.stdout.write(argv[1] === 'bash' ? bashCompletion() : zshCompletion());
    return 0;
  } // svc-operator suspend|resume|defrag|compact|move-leader|restart|alarm|report <cluster> (cli/oncall-kube.ts)
  try {
    // `local backup|verify-backup --wait` is a bare flag (backup-now's --wait takes seconds)
    const wait = argv.includes('--wait');
    // the on-call verbs (cli/oncall.ts), each with its own flags
    const verb = argv[0] === 'local' ? onCallVerb(argv[1]) : undefined;
    if (verb) {
      const { words: vw, flags: vf } = parseArgs(argv.slice(2), { string: ['state-dir', ...(verb.flags.string ?? [])], boolean: ['dry-run', ...(verb.flags.boolean ?? [])] });
      if (vf.has('help')) {
        process.stdout.write(USAGE);
        return 0;
      }
      return await verb.local({ args: vw, flags: vf, stateDir: vf.get('state-dir') ?? '.svc-local', dryRun: vf.has('dry-run'), out: (t) => void process.stdout.write(t) });
    }
    const { words, flags } = parseArgs(argv.filter((a) => a !== '--wait'), { string: ['file', 'state-dir', 'output', 'listen'], boolean: ['keep', 'dry-run'] });
    if (wait && !(words[0] === 'local' && (words[1] === 'backup' || words[1] === 'verify-backup'))) throw new UsageError('--wait belongs to local backup and local verify-backup');
    if (flags.has('dry-run') && !(words[0] === 'local' && (words[1] === 'recover' || words[1] === 'run'))) throw new UsageError('--dry-run belongs to local recover and local run');
    if (flags.has('listen') && !(words[0] === 'local' && words[1] === 'run')) throw new UsageError('--listen belongs to local run');
    if (flags.has('help') || words.length === 0) {
      (flags.has('help') ? process.stdout : process.stderr).write(USAGE);
      return flags.has('help') ? 0 : 2;
    }
    const output = flags.get('output');
    if (output !== undefined && output !== 'json' && output !== 'text') throw new UsageError(`--output must be json or text, not ${output}`);
    const stateDir = flags.get('state-dir') ?? '.svc-local';
    if (words[0] === 'demo' && words.length === 1) return await demo({ stateDir: flags.get('state-dir'), keep: flags.has('keep') });
    if (words[0] === 'local' && words.length === 2) {
      switch (words[1]) {
        case 'apply': {
          const file = flags.get('file');
          if (!file) throw new UsageError('local apply needs -f <cluster.yaml>');
          return await localApply(file, stateDir, output);
        }
        case 'status':
          return await localStatus(stateDir, output);
        case 'backup':
          return await localBackup(stateDir, wait, output);
        case 'verify-backup':
          return await localVerifyBackup(stateDir, wait, output);
        case 'backups':
          return await localBackups(stateDir, output, flags.get('file'));
        case 'delete':
          return await localDelete(stateDir);
        case 'run':
          return await localRun({ stateDir, listen: flags.get('listen') ?? DEFAULT_LISTEN, dryRun: flags.has('dry-run'), crashAt: process.env.SVC_OPERATOR_CRASH_AT });
        case 'recover':
          return await localRecover({ stateDir, dryRun: flags.has('dry-run'), output, crashAt: process.env.SVC_OPERATOR_CRASH_AT });
      }
    }
    throw new UsageError(`unknown command: ${words.join(' ')}`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`svc-operator: ${e.message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof CommandError || e instanceof RuntimeError) {
      process.stderr.write(`svc-operator: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`svc-operator: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
