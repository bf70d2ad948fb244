// Shell completion for svc-operator and the kubectl plugin, from the command tables (the on-call verbs of
// oncall.ts and oncall-kube.ts, the other commands below): `svc-operator completion bash|zsh` prints the script;
// completions/ holds the same output (a unit test keeps them equal).
import { KUBE_ONCALL_USAGE } from './oncall-kube.js';
import { ONCALL_VERBS } from './oncall.js';

/** What follows each command word: sub-words and flags. */
interface Words {
  commands: string[];
  flags: string[];
}

const KUBE_FLAGS = ['--namespace', '-n', '--kubeconfig'];

/** The plugin's commands (kubectl svc <command>) and their flags. */
function pluginWords(): Record<string, Words> {
  return {
    status: { commands: [], flags: [...KUBE_FLAGS, '--watch', '--interval', '--output'] },
    backup: { commands: [], flags: [...KUBE_FLAGS, '--token', '--wait'] },
    verify: { commands: [], flags: [...KUBE_FLAGS, '--token', '--wait'] },
    recover: { commands: [], flags: [...KUBE_FLAGS, '--dry-run', '--token', '--wait'] },
    backups: { commands: [], flags: [...KUBE_FLAGS, '--output'] },
    ...Object.fromEntries(Object.entries(KUBE_ONCALL_USAGE).map(([v, usage]) => [v, usageWords(usage)])),
  };
}

/** The sub-words (a leading `a|b`) and flags (-n and every --flag) a usage line names. */
function usageWords(usage: string): Words {
  const line = usage.split('\n')[0];
  const first = line.split(' ')[0];
  const commands = first.includes('|') && !first.startsWith('<') ? first.split('|') : [];
  return { commands, flags: [...new Set([...(line.includes('-n NAMESPACE') ? ['--namespace', '-n'] : []), ...(line.match(/--[a-z][\w-]*/g) ?? [])])] };
}

/** svc-operator local <command> and their flags. */
function localWords(): Record<string, Words> {
  const sd = ['--state-dir'];
  return {
    apply: { commands: [], flags: ['-f', '--file', '--output', ...sd] },
    status: { commands: [], flags: ['--output', ...sd] },
    backup: { commands: [], flags: ['--wait', '--output', ...sd] },
    'verify-backup': { commands: [], flags: ['--wait', '--output', ...sd] },
    backups: { commands: [], flags: ['-f', '--file', '--output', ...sd] },
    delete: { commands: [], flags: sd },
    recover: { commands: [], flags: ['--dry-run', '--output', ...sd] },
    run: { commands: [], flags: ['--listen', '--dry-run', ...sd] },
    ...Object.fromEntries(ONCALL_VERBS.map((v) => [v.name, {
      commands: v.name === 'alarm' ? ['list', 'disarm'] : [],
      flags: [...sd, '--dry-run', ...(v.flags.string ?? []).map((f) => `--${f}`), ...(v.flags.boolean ?? []).map((f) => `--${f}`)],
    }])),
  };
}

/** The bash completion script (svc-operator, kubectl-svc, and kubectl svc through kubectl_complete-svc-style words). */
export function bashCompletion(): string {
  const plugin = pluginWords();
  const local = localWords();
  const top = ['local', 'demo', 'crd', 'run', 'backup', 'restore', 'verify', 'backup-agent', 'completion', ...Object.keys(plugin).map((c) => (c === 'backup' ? 'backup-now' : c === 'verify' ? 'verify-now' : c))];
  const cases = (prefix: string, table: Record<string, Words>) => Object.entries(table).map(([c, w]) => `    ${prefix}/${c}) words="${[...w.commands, ...w.flags].join(' ')}" ;;`).join('\n');
  return `# bash completion for svc-operator and kubectl-svc (generated: svc-operator completion bash)
_svc_command_words() {
  # $1: kube/<command> (the kubectl plugin's, which svc-operator has too; its backup-now and verify-now come as
  # backup and verify) or local/<command> (svc-operator local); sets the caller's words
  case "$1" in
${cases('kube', plugin)}
${cases('local', local)}
  esac
}
_svc_words() {
  # $1: the program's command words after its name
  local cur="\${COMP_WORDS[COMP_CWORD]}" words="" c="\${COMP_WORDS[1]}"
  if [ "$1" = plugin ]; then
    if [ "$COMP_CWORD" -le 1 ]; then words="${Object.keys(plugin).join(' ')}"; else _svc_command_words "kube/$c"; fi
  elif [ "$COMP_CWORD" -le 1 ]; then words="${[...new Set(top)].join(' ')}"
  elif [ "$c" = local ]; then
    if [ "$COMP_CWORD" -le 2 ]; then words="${Object.keys(local).join(' ')}"; else _svc_command_words "local/\${COMP_WORDS[2]}"; fi
  elif [ "$c" = completion ]; then words="bash zsh"
  else _svc_command_words "kube/\${c%-now}"
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
_svc_operator() { _svc_words operator; }
_kubectl_svc() { _svc_words plugin; }
complete -F _svc_operator svc-operator
complete -F _kubectl_svc kubectl-svc
`;
}

/** The zsh completion script (bash's, through bashcompinit). */
export function zshCompletion(): string {
  return `#compdef svc-operator kubectl-svc
# zsh completion for svc-operator and kubectl-svc (generated: svc-operator completion zsh): bash's words through
# bashcompinit, so both shells complete the same commands and flags
autoload -U +X bashcompinit && bashcompinit
${bashCompletion().split('\n').slice(1).join('\n')}`;
}
