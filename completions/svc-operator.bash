# bash completion for svc-operator and kubectl-svc (generated: svc-operator completion bash)
_svc_kube_words() {
  # $1: a command of the kubectl plugin (svc-operator's backup-now and verify-now come as backup and verify);
  # sets the caller's words
  case "$1" in
    status) words="--namespace -n --kubeconfig --watch --interval --output" ;;
    backup) words="--namespace -n --kubeconfig --token --wait" ;;
    verify) words="--namespace -n --kubeconfig --token --wait" ;;
    recover) words="--namespace -n --kubeconfig --dry-run --token --wait" ;;
    backups) words="--namespace -n --kubeconfig --output" ;;
    suspend) words="--namespace -n --kubeconfig --dry-run" ;;
    resume) words="--namespace -n --kubeconfig --dry-run" ;;
    defrag) words="--namespace -n --kubeconfig --dry-run" ;;
    compact) words="--namespace -n --kubeconfig --dry-run" ;;
    move-leader) words="--namespace -n --to --kubeconfig --dry-run" ;;
    restart) words="--namespace -n --kubeconfig --dry-run" ;;
    alarm) words="list disarm --namespace -n --kubeconfig --dry-run" ;;
    report) words="--namespace -n --kubeconfig --file --dry-run" ;;
  esac
}
_svc_words() {
  # $1: the program's command words after its name
  local cur="${COMP_WORDS[COMP_CWORD]}" words=""
  if [ "$1" = plugin ]; then
    if [ "$COMP_CWORD" -le 1 ]; then words="status backup verify recover backups suspend resume defrag compact move-leader restart alarm report"; else _svc_kube_words "${COMP_WORDS[1]}"; fi
  else
    if [ "$COMP_CWORD" -le 1 ]; then words="local demo crd run backup restore verify backup-agent completion status backup-now verify-now recover backups suspend resume defrag compact move-leader restart alarm report"
    elif [ "${COMP_WORDS[1]}" = local ]; then
      if [ "$COMP_CWORD" -le 2 ]; then words="apply status backup verify-backup backups delete recover suspend resume move-leader restart defrag compact alarm report"; else
      case "${COMP_WORDS[2]}" in
      apply) words="-f --file --output --state-dir" ;;
      status) words="--output --state-dir" ;;
      backup) words="--wait --output --state-dir" ;;
      verify-backup) words="--wait --output --state-dir" ;;
      backups) words="-f --file --output --state-dir" ;;
      delete) words="--state-dir" ;;
      recover) words="--dry-run --output --state-dir" ;;
      suspend) words="--state-dir --dry-run" ;;
      resume) words="--state-dir --dry-run" ;;
      move-leader) words="--state-dir --dry-run --to" ;;
      restart) words="--state-dir --dry-run" ;;
      defrag) words="--state-dir --dry-run" ;;
      compact) words="--state-dir --dry-run" ;;
      alarm) words="list disarm --state-dir --dry-run" ;;
      report) words="--state-dir --dry-run --file" ;;
      esac; fi
    elif [ "${COMP_WORDS[1]}" = completion ]; then words="bash zsh"
    else
      local c="${COMP_WORDS[1]}"
      _svc_kube_words "${c%-now}"
    fi
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
_svc_operator() { _svc_words operator; }
_kubectl_svc() { _svc_words plugin; }
complete -F _svc_operator svc-operator
complete -F _kubectl_svc kubectl-svc
