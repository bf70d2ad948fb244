# bash completion for svc-operator and kubectl-svc (generated: svc-operator completion bash)
_svc_command_words() {
  # $1: kube/<command> (the kubectl plugin's, which svc-operator has too; its backup-now and verify-now come as
  # backup and verify) or local/<command> (svc-operator local); sets the caller's words
  case "$1" in
    kube/status) words="--namespace -n --kubeconfig --watch --interval --output" ;;
    kube/backup) words="--namespace -n --kubeconfig --token --wait" ;;
    kube/verify) words="--namespace -n --kubeconfig --token --wait" ;;
    kube/recover) words="--namespace -n --kubeconfig --dry-run --token --wait" ;;
    kube/backups) words="--namespace -n --kubeconfig --output" ;;
    kube/suspend) words="--namespace -n --kubeconfig --dry-run" ;;
    kube/resume) words="--namespace -n --kubeconfig --dry-run" ;;
    kube/defrag) words="--namespace -n --kubeconfig --dry-run" ;;
    kube/compact) words="--namespace -n --kubeconfig --dry-run" ;;
    kube/move-leader) words="--namespace -n --to --kubeconfig --dry-run" ;;
    kube/restart) words="--namespace -n --kubeconfig --dry-run" ;;
    kube/alarm) words="list disarm --namespace -n --kubeconfig --dry-run" ;;
    kube/upgrade-plan) words="--namespace -n --to --kubeconfig" ;;
    kube/report) words="--namespace -n --kubeconfig --file --dry-run" ;;
    local/apply) words="-f --file --output --state-dir" ;;
    local/status) words="--output --state-dir" ;;
    local/backup) words="--wait --output --state-dir" ;;
    local/verify-backup) words="--wait --output --state-dir" ;;
    local/backups) words="-f --file --output --state-dir" ;;
    local/delete) words="--state-dir" ;;
    local/recover) words="--dry-run --output --state-dir" ;;
    local/run) words="--listen --dry-run --state-dir" ;;
    local/suspend) words="--state-dir --dry-run" ;;
    local/resume) words="--state-dir --dry-run" ;;
    local/move-leader) words="--state-dir --dry-run --to" ;;
    local/restart) words="--state-dir --dry-run" ;;
    local/defrag) words="--state-dir --dry-run" ;;
    local/compact) words="--state-dir --dry-run" ;;
    local/alarm) words="list disarm --state-dir --dry-run" ;;
    local/upgrade-plan) words="--state-dir --dry-run --to" ;;
    local/report) words="--state-dir --dry-run --file" ;;
  esac
}
_svc_words() {
  # $1: the program's command words after its name
  local cur="${COMP_WORDS[COMP_CWORD]}" words="" c="${COMP_WORDS[1]}"
  if [ "$1" = plugin ]; then
    if [ "$COMP_CWORD" -le 1 ]; then words="status backup verify recover backups suspend resume defrag compact move-leader restart alarm upgrade-plan report"; else _svc_command_words "kube/$c"; fi
  elif [ "$COMP_CWORD" -le 1 ]; then words="local demo crd run backup restore verify backup-agent completion status backup-now verify-now recover backups suspend resume defrag compact move-leader restart alarm upgrade-plan report"
  elif [ "$c" = local ]; then
    if [ "$COMP_CWORD" -le 2 ]; then words="apply status backup verify-backup backups delete recover run suspend resume move-leader restart defrag compact alarm upgrade-plan report"; else _svc_command_words "local/${COMP_WORDS[2]}"; fi
  elif [ "$c" = completion ]; then words="bash zsh"
  else _svc_command_words "kube/${c%-now}"
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
_svc_operator() { _svc_words operator; }
_kubectl_svc() { _svc_words plugin; }
complete -F _svc_operator svc-operator
complete -F _kubectl_svc kubectl-svc
