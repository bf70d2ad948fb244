// Validation and defaults of SvcCluster manifests: the same rules the CRD's schema and CEL rules state.
import { API_VERSION, KIND, type SvcCluster, type SvcClusterSpec } from './types.js';
import { isSupportedVersion, SUPPORTED_MINORS } from './versions.js';
import { scheduleProblem } from './cron.js';
import { quantityBytes } from './quantity.js';
import { memberConfigProblems } from './member-config.js';
import { maintenanceProblems, storageChangeProblems } from './maintenance.js';
import { svcClusterSchema, type Schema } from './crd.js';
import { durationMs } from './duration.js';
import { CodedError } from '../../server/coded-error.js';

/** Raised when a manifest is not a valid SvcCluster; `problems` lists every violation. */
export class ValidationError extends CodedError<'INVALID_SVCCLUSTER'> {
  constructor(readonly problems: string[]) {
    super('INVALID_SVCCLUSTER', `invalid SvcCluster: ${problems.join('; ')}`);
  }
}

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Problems of a spec (empty when valid). spec.replicas 0 hibernates (break-glass: members stopped, data kept). */
export function specProblems(spec: unknown): string[] {
  const p: string[] = [];
  if (typeof spec !== 'object' || spec === null) return ['spec must be an object'];
  const s = spec as Record<string, unknown>;
  if (typeof s.version !== 'string' || !/^\d+\.\d+\.\d+$/.test(s.version)) p.push('spec.version must be "<major>.<minor>.<patch>"');
  else if (!isSupportedVersion(s.version)) p.push(`spec.version ${s.version} is not of a supported release line (${SUPPORTED_MINORS.join(', ')})`);
  if (s.replicas !== undefined && s.replicas !== 0 && (typeof s.replicas !== 'number' || !Number.isInteger(s.replicas) || s.replicas < 1 || s.replicas > 7 || s.replicas % 2 === 0)) {
    p.push('spec.replicas must be an odd integer from 1 to 7, or 0 to hibernate (members stopped, data kept)');
  }
  if (s.enableV2 !== undefined && typeof s.enableV2 !== 'boolean') p.push('spec.enableV2 must be a boolean');
  const u = s.upgrade as Record<string, unknown> | undefined;
  if (u !== undefined) {
    if (typeof u !== 'object' || u === null) p.push('spec.upgrade must be an object');
    else {
      if (u.paused !== undefined && typeof u.paused !== 'boolean') p.push('spec.upgrade.paused must be a boolean');
      if (u.acknowledgeLargeV2Data !== undefined && typeof u.acknowledgeLargeV2Data !== 'boolean') p.push('spec.upgrade.acknowledgeLargeV2Data must be a boolean');
      const w = u.waitBetweenMembersSeconds;
      if (w !== undefined && (typeof w !== 'number' || !(w >= 0) || w > 3600)) p.push('spec.upgrade.waitBetweenMembersSeconds must be a number from 0 to 3600');
    }
  }
  const b = s.backup as Record<string, unknown> | undefined;
  if (b !== undefined && b.keep !== undefined && (typeof b.keep !== 'number' || !Number.isInteger(b.keep) || b.keep < 1)) p.push('spec.backup.keep must be a positive integer');
  // CEL cannot parse cron: the schedule is checked here (the controller shows it as Blocked, with an Event)
  if (b !== undefined && b.schedule !== undefined) {
    if (typeof b.schedule !== 'string') p.push('spec.backup.schedule must be a string');
    else {
      const why = scheduleProblem(b.schedule, typeof b.timeZone === 'string' ? b.timeZone : undefined);
      if (why) p.push(why);
    }
  }
  const v = b?.verify as Record<string, unknown> | undefined;
  if (v !== undefined) {
    if (typeof v !== 'object' || v === null || typeof v.schedule !== 'string') p.push('spec.backup.verify.schedule must be a string (a cron schedule of restore drills)');
    else {
      const why = scheduleProblem(v.schedule, typeof b!.timeZone === 'string' ? b!.timeZone : undefined, 'spec.backup.verify');
      if (why) p.push(why);
    }
  }
  if (b !== undefined && b.size !== undefined && (typeof b.size !== 'string' || quantityBytes(b.size) === undefined)) p.push(`spec.backup.size "${String(b.size)}" is not a quantity (e.g. 5Gi)`);
  if (b !== undefined && b.maxAge !== undefined && (typeof b.maxAge !== 'string' || !durationMs(b.maxAge))) p.push(`spec.backup.maxAge "${String(b.maxAge)}" is not a duration (e.g. 168h, 7d, 90m)`);
  if (b !== undefined && b.credentialsSecret !== undefined && (typeof b.credentialsSecret !== 'string' || !NAME_RE.test(b.credentialsSecret))) p.push('spec.backup.credentialsSecret must name a Secret');
  const names = new Set<string>();
  if (b !== undefined && b.destinations !== undefined) {
    if (!Array.isArray(b.destinations)) p.push('spec.backup.destinations must be a list');
    else b.destinations.forEach((d: Record<string, unknown> | null, i: number) => {
      const at = `spec.backup.destinations[${i}]`;
      if (typeof d !== 'object' || d === null) return void p.push(`${at} must be an object`);
      if (typeof d.name !== 'string' || !NAME_RE.test(d.name)) p.push(`${at}.name must be a DNS label (lower-case letters, digits, "-")`);
      else if (names.has(d.name)) p.push(`${at}.name "${d.name}" is used twice`);
      else names.add(d.name);
      if ((d.pvc === undefined) === (d.s3 === undefined)) p.push(`${at} has exactly one of pvc and s3`);
      if (d.s3 !== undefined) p.push(...s3Problems(d.s3, `${at}.s3`));
    });
  }
  if (b !== undefined && b.continuous !== undefined) {
    if (typeof b.continuous !== 'boolean') p.push('spec.backup.continuous must be true or false');
    // the segments go to object stores only: without one they would go nowhere
    else if (b.continuous && !(Array.isArray(b.destinations) && b.destinations.some((d: Record<string, unknown> | null) => typeof d === 'object' && d !== null && d.s3 !== undefined))) {
      p.push('spec.backup.continuous needs an s3 destination in spec.backup.destinations (delta segments are written to object storage)');
    }
  }
  const r = s.restore as Record<string, unknown> | undefined;
  if (r !== undefined) p.push(...restoreProblems(r, names));
  const l = s.logging as Record<string, unknown> | undefined;
  if (l !== undefined) {
    if (l.logger !== undefined && l.logger !== 'capnslog' && l.logger !== 'zap') p.push('spec.logging.logger must be capnslog or zap');
    if (l.level !== undefined && !['debug', 'info', 'warn', 'error'].includes(String(l.level))) p.push('spec.logging.level must be debug, info, warn or error');
  }
  p.push(...podTemplateProblems(s.podTemplate as SvcClusterSpec['podTemplate']));
  p.push(...serviceProblems(s.service as SvcClusterSpec['service']));
  p.push(...maintenanceProblems(s as unknown as SvcClusterSpec));
  // a combination the release cannot run (e.g. 3.3 and spec.logging.logger): refused before anything starts
  if (p.length === 0) p.push(...memberConfigProblems(s as unknown as SvcClusterSpec));
  return p;
}

/** Problems of an S3 destination at `at` (the same rules as the CRD's). */
function s3Problems(v: unknown, at: string): string[] {
  if (typeof v !== 'object' || v === null) return [`${at} must be an object`];
  const s3 = v as Record<string, unknown>;
  const p: string[] = [];
  if (typeof s3.bucket !== 'string' || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3.bucket)) p.push(`${at}.bucket must be a bucket name (3 to 63 lower-case letters, digits, "." and "-")`);
  if (s3.endpoint !== undefined && (typeof s3.endpoint !== 'string' || !/^https?:\/\/[^/]+/.test(s3.endpoint))) p.push(`${at}.endpoint must be an http(s):// URL, not ${JSON.stringify(s3.endpoint)}`);
  if (s3.prefix !== undefined && (typeof s3.prefix !== 'string' || s3.prefix.startsWith('/') || s3.prefix.endsWith('/'))) p.push(`${at}.prefix must not start or end with "/"`);
  if (s3.forcePathStyle !== undefined && typeof s3.forcePathStyle !== 'boolean') p.push(`${at}.forcePathStyle must be a boolean`);
  if (s3.caBundle !== undefined && s3.caSecret !== undefined) p.push(`${at} takes caBundle or caSecret, not both`);
  if (typeof s3.caBundle === 'string' && !s3.caBundle.includes('-----BEGIN CERTIFICATE-----')) p.push(`${at}.caBundle must be PEM certificates (-----BEGIN CERTIFICATE-----)`);
  return p;
}

/** Problems of spec.restore (`destinations`: the names spec.backup.destinations declares). */
function restoreProblems(r: Record<string, unknown>, destinations: Set<string>): string[] {
  const p: string[] = [];
  if ((r.snapshot === undefined) === (r.source === undefined)) return ['spec.restore needs exactly one of snapshot (a file) and source (a destination\'s restore points)'];
  if (r.snapshot !== undefined && (typeof r.snapshot !== 'string' || r.snapshot === '')) p.push('spec.restore.snapshot must name a snapshot');
  if (r.source === undefined && (r.revision !== undefined || r.time !== undefined)) p.push('spec.restore.revision and spec.restore.time go with spec.restore.source');
  if (r.revision !== undefined && r.time !== undefined) p.push('spec.restore takes a revision or a time, not both');
  if (r.revision !== undefined && (typeof r.revision !== 'number' || !Number.isInteger(r.revision) || r.revision < 1)) p.push('spec.restore.revision must be a positive integer');
  if (r.time !== undefined && (typeof r.time !== 'string' || Number.isNaN(Date.parse(r.time)))) p.push(`spec.restore.time must be an RFC 3339 time (e.g. 2026-11-26T10:00:00Z), not ${JSON.stringify(r.time)}`);
  const src = r.source as Record<string, unknown> | undefined;
  if (src !== undefined) {
    if (typeof src !== 'object' || src === null) return [...p, 'spec.restore.source must be an object'];
    if ((src.destination === undefined) === (src.s3 === undefined)) p.push('spec.restore.source names exactly one of destination (of spec.backup.destinations) and s3 (a bucket)');
    if (src.destination !== undefined && !destinations.has(String(src.destination))) {
      p.push(`spec.restore.source.destination "${String(src.destination)}" is not one of spec.backup.destinations (${[...destinations].join(', ') || 'none'})`);
    }
    if (src.s3 !== undefined) p.push(...s3Problems(src.s3, 'spec.restore.source.s3'));
    if (src.cluster !== undefined && (typeof src.cluster !== 'string' || !NAME_RE.test(src.cluster))) p.push('spec.restore.source.cluster must be a cluster name');
  }
  return p;
}

/**
 * Fields the SvcCluster schema does not know, each as "<path>: unknown field" (as `kubectl apply`'s strict field
 * validation reports them): a typo or a block of a newer operator is refused, not silently dropped. metadata is
 * the apiserver's own (ObjectMeta) and not walked.
 */
export function unknownFields(doc: unknown, schema: Schema = svcClusterSchema, path = ''): string[] {
  if (Array.isArray(doc)) return schema.items ? doc.flatMap((d, i) => unknownFields(d, schema.items!, `${path}[${i}]`)) : [];
  if (typeof doc !== 'object' || doc === null || schema['x-kubernetes-preserve-unknown-fields']) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    const at = path ? `${path}.${k}` : k;
    const sub = schema.properties?.[k] ?? schema.additionalProperties;
    if (!sub) out.push(`${at}: unknown field`);
    else if (at !== 'metadata') out.push(...unknownFields(v, sub, at));
  }
  return out;
}

/** Environment variables the operator sets itself on the svc container: its release, the member's name and its flags. */
/** SVC_* variables of flags the operator passes from a spec field (a member refuses a variable its flag shadows). */
const FLAG_FIELD_ENV: Readonly<Record<string, string>> = {
  SVC_QUOTA_BACKEND_BYTES: 'spec.maintenance.quotaBackendBytes',
  SVC_AUTO_COMPACTION_MODE: 'spec.maintenance.autoCompaction.mode',
  SVC_AUTO_COMPACTION_RETENTION: 'spec.maintenance.autoCompaction.retention',
};

export const OPERATOR_ENV = ['SVC_VERSION', 'POD_NAME', 'POD_NAMESPACE', 'INITIAL_CLUSTER', 'INITIAL_CLUSTER_STATE', 'INITIAL_CLUSTER_TOKEN', 'ENABLE_V2', 'LOGGER', 'LOG_LEVEL'];

function serviceProblems(sv: SvcClusterSpec['service']): string[] {
  const p: string[] = [];
  if (sv?.type !== undefined && !['ClusterIP', 'NodePort', 'LoadBalancer'].includes(sv.type)) p.push(`spec.service.type must be ClusterIP, NodePort or LoadBalancer, not ${String(sv.type)}`);
  for (const field of ['labels', 'annotations'] as const) {
    for (const key of Object.keys(sv?.[field] ?? {})) {
      if (key.startsWith('svc.dev/')) p.push(`spec.service.${field}: ${key} is the operator's own (svc.dev/ keys are reserved)`);
    }
  }
  return p;
}

function podTemplateProblems(pt: SvcClusterSpec['podTemplate']): string[] {
  const p: string[] = [];
  for (const key of Object.keys(pt?.annotations ?? {})) {
    if (key.startsWith('svc.dev/')) p.push(`spec.podTemplate.annotations: ${key} is the operator's own (svc.dev/ keys are reserved)`);
  }
  const seen = new Set<string>();
  for (const e of pt?.env ?? []) {
    if (typeof e?.name !== 'string' || !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(e.name)) p.push(`spec.podTemplate.env: "${String(e?.name)}" is not a variable name`);
    else if (OPERATOR_ENV.includes(e.name)) p.push(`spec.podTemplate.env: ${e.name} is set by the operator (use the spec field that sets it)`);
    else if (FLAG_FIELD_ENV[e.name]) p.push(`spec.podTemplate.env: ${e.name} would shadow the flag the operator passes from ${FLAG_FIELD_ENV[e.name]}; set that field instead`);
    else if (seen.has(e.name)) p.push(`spec.podTemplate.env: ${e.name} is listed twice`);
    else seen.add(e.name);
    if (e?.value !== undefined && e.valueFrom !== undefined) p.push(`spec.podTemplate.env: ${String(e.name)} has both value and valueFrom`);
  }
  return p;
}

/** Problems of a change from `old` to `next` that the CRD forbids (immutable fields). */
export function updateProblems(old: SvcClusterSpec, next: SvcClusterSpec): string[] {
  const p: string[] = [];
  if ((old.storage?.storageClassName ?? '') !== (next.storage?.storageClassName ?? '')) p.push('spec.storage.storageClassName is immutable');
  p.push(...storageChangeProblems(old, next));
  return p;
}

/** The spec with defaults filled in. */
export function withDefaults(spec: SvcClusterSpec): SvcClusterSpec {
  return {
    ...spec,
    replicas: spec.replicas ?? 3,
    backup: { keep: 3, ...spec.backup },
    upgrade: { paused: false, waitBetweenMembersSeconds: 0, acknowledgeLargeV2Data: false, ...spec.upgrade },
  };
}

/** Checks a parsed manifest (e.g. from YAML) and returns it typed, with defaults; throws ValidationError. */
export function parseSvcCluster(doc: unknown): SvcCluster {
  const p: string[] = [];
  if (typeof doc !== 'object' || doc === null) throw new ValidationError(['the manifest must be a YAML/JSON object']);
  const d = doc as Record<string, unknown>;
  if (d.apiVersion !== API_VERSION) p.push(`apiVersion must be ${API_VERSION}`);
  if (d.kind !== KIND) p.push(`kind must be ${KIND}`);
  const md = d.metadata as Record<string, unknown> | undefined;
  if (typeof md !== 'object' || md === null || typeof md.name !== 'string' || !NAME_RE.test(md.name) || md.name.length > 50) {
    p.push('metadata.name must be a DNS label (lower-case letters, digits, "-"; at most 50 characters)');
  }
  p.push(...unknownFields(d));
  p.push(...specProblems(d.spec));
  if (p.length > 0) throw new ValidationError(p);
  const c = doc as SvcCluster;
  return { ...c, spec: withDefaults(c.spec) };
}
