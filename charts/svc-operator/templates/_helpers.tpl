{{/* Name of the chart (nameOverride replaces it). */}}
{{- define "svc-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of the release's objects (fullnameOverride replaces it). */}}
{{- define "svc-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "svc-operator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "svc-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "svc-operator.labels" -}}
{{ include "svc-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "svc-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "svc-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The operator image (the Dockerfile's `operator` target); backup and restore Jobs run it too. */}}
{{- define "svc-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default (printf "v%s" .Chart.AppVersion)) -}}
{{- end -}}

{{/* Namespace of the `helm test` cluster: tests.namespace, else the first watched namespace, else the release's. */}}
{{- define "svc-operator.testNamespace" -}}
{{- .Values.tests.namespace | default (first .Values.watchNamespaces) | default .Release.Namespace -}}
{{- end -}}

{{/*
The operator's permissions on the namespaces it watches (a ClusterRole, or a Role in each watched namespace).
Least privilege: exactly the verbs the controller uses. It reads and applies the objects an SvcCluster owns
(server-side apply needs create and patch), deletes member pods one at a time during an upgrade, writes
SvcCluster status and its progress annotation, and records Events. Backups into spec.backup.pvc and restores run
as Jobs in the cluster's namespace (created, read until they finish, deleted); a restore first creates the
members' data claims, which the StatefulSet adopts. Secrets: get by name only (TLS). No PVC updates or deletes.
*/}}
{{- define "svc-operator.rules" -}}
- apiGroups: ["svc.dev"]
  resources: ["svcclusters"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["svc.dev"]
  resources: ["svcclusters/status"]
  verbs: ["get", "patch"]
# the owner references the operator sets block the SvcCluster's deletion until its objects are gone: OpenShift's
# OwnerReferencesPermissionEnforcement admission demands update on the owner's finalizers for that
- apiGroups: ["svc.dev"]
  resources: ["svcclusters/finalizers"]
  verbs: ["update"]
# patch: a member being defragmented is labelled out of the client Service (svc.dev/serving) and back
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "delete", "patch"]
# ... and its defragmentation waits until the Service's EndpointSlices no longer list it
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list"]
- apiGroups: [""]
  resources: ["services", "configmaps"]
  verbs: ["get", "list", "watch", "create", "patch"]
# delete: a larger spec.storage.size recreates the StatefulSet (its claim template) with its pods orphaned
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# continuous backup: the backup agent's Deployment (<cluster>-backup-agent), deleted when continuous is turned off
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "create", "patch", "delete"]
# whether the members' class allows volume expansion (cluster-scoped: granted in the ClusterRole only; without it
# the claim's resize is tried and the apiserver's refusal shows)
- apiGroups: ["storage.k8s.io"]
  resources: ["storageclasses"]
  verbs: ["get", "list"]
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "create", "patch"]
# list: a pod the StatefulSet could not create (Pod Security, a quota) and a claim that cannot be provisioned are
# told only by their Warning Events, which status shows (read only while a pod is missing or unscheduled)
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "list"]
# TLS clusters: the operator reads spec.tls.clientSecret/peerSecret by name (a GET each reconcile) to check
# them and to present the client certificate to the members. Only get: no list or watch, so it never holds
# (or is sent) the other Secrets of a namespace; a renewed Secret is picked up at the next resync. The same for the
# Secrets of object-store destinations: checked before a backup Job starts, and read to list a bucket for a restore.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "create", "delete"]
# delete: a member that lost its data is replaced on a fresh volume (its claim deleted, the StatefulSet makes a new one)
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "create", "patch", "delete"]
{{- end -}}
