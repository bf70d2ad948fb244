// GET /metrics: the member's Prometheus metrics. Names and help texts follow the reference (with svc_ for its
// product prefix) so dashboards and alerts carry over; which mvcc names are served is the release table's call.
import { Registry, Gauge, Counter, Histogram, collectDefaultMetrics } from 'prom-client';
import type { MetricsCore } from '../core/interfaces.js';
import { idHex } from '../cluster/ids.js';

const WAL_BUCKETS = Array.from({ length: 14 }, (_, i) => 0.001 * 2 ** i);
const APPLY_BUCKETS = Array.from({ length: 16 }, (_, i) => 0.0001 * 2 ** i);

export interface MemberMetrics {
  registry: Registry;
  healthSuccess: Counter;
  healthFailures: Counter;
}

let processMetrics: Registry | undefined;

/**
 * The process's own series (as the reference's process_*): memory, CPU, open files, and Node's event-loop delay and
 * heap, which show a member whose one thread is saturated. Collected once per process (one event-loop monitor and
 * one GC observer), served by every member in it.
 */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** A registry of its own per member, so several members can live in one process (embedding, tests). */
export function createMetrics(server: MetricsCore): MemberMetrics {
  // the process's series first, then the member's own
  const registry = Registry.merge([processRegistry()]);
  const release = server.opts.release;
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({ name, help, registers: [registry], collect() { this.set(value()); } });
  const counterFrom = (name: string, help: string, value: () => number) =>
    new Counter({
      name, help, registers: [registry],
      collect() {
        // prom-client counters only go up; mirror the member's own counter.
        const v = value();
        const cur = (this as unknown as { hashMap: Record<string, { value: number }> }).hashMap['']?.value ?? 0;
        if (v > cur) this.inc(v - cur);
      },
    });

  gauge('svc_server_is_leader', 'Whether or not this member is a leader. 1 if is, 0 otherwise.', () => (server.isLeader() ? 1 : 0));
  gauge('svc_server_has_leader', 'Whether or not a leader exists. 1 is existence, 0 is not.', () => (server.lead !== 0n ? 1 : 0));
  gauge('svc_server_is_learner', 'Whether or not this member is a learner. 1 if is, 0 otherwise.', () => (server.membership.member(server.memberId)?.isLearner ? 1 : 0));
  counterFrom('svc_server_leader_changes_seen_total', 'The number of leader changes seen.', () => server.stats.leaderChanges);
  gauge('svc_server_proposals_committed_total', 'The total number of consensus proposals committed.', () => server.stats.proposalsApplied); // committed entries are applied as soon as they commit
  gauge('svc_server_proposals_applied_total', 'The total number of consensus proposals applied.', () => server.stats.proposalsApplied);
  gauge('svc_server_proposals_pending', 'The current number of pending proposals to commit.', () => server.stats.proposalsPending);
  counterFrom('svc_server_proposals_failed_total', 'The total number of failed proposals seen.', () => server.stats.proposalsFailed);
  counterFrom('svc_server_read_indexes_failed_total', 'The total number of failed read indexes seen.', () => server.stats.readIndexesFailed);
  gauge('svc_server_quota_backend_bytes', 'Current backend storage quota size in bytes.', () => server.opts.quotaBackendBytes);
  // svc's own (etcd 3.3-3.5 expose no size of the v2 store): the operator reads it from the leader to decide
  // whether an upgrade must wait for spec.upgrade.acknowledgeLargeV2Data. The walk runs again only after a
  // change (the store's index moves with every write and expiry, a restored snapshot is a new store).
  let v2Seen: { store: unknown; index: number; bytes: number } | undefined;
  gauge('svc_v2_store_data_bytes', 'Bytes of keys and values held in the v2 store (svc extension).', () => {
    const v2 = server.v2;
    if (v2Seen?.store !== v2 || v2Seen.index !== v2.index) v2Seen = { store: v2, index: v2.index, bytes: v2.dataSize() };
    return v2Seen.bytes;
  });
  new Gauge({
    name: 'svc_server_version', help: "Which version is running. 1 for 'server_version' label with current version.",
    labelNames: ['server_version'], registers: [registry],
    collect() { this.set({ server_version: release.version }, 1); },
  });
  new Gauge({
    name: 'svc_cluster_version', help: "Which version is running. 1 for 'cluster_version' label with current cluster version",
    labelNames: ['cluster_version'], registers: [registry],
    collect() {
      this.reset();
      if (server.membership.version) this.set({ cluster_version: server.membership.version }, 1);
    },
  });
  new Gauge({
    name: 'svc_server_id', help: "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
    labelNames: ['server_id'], registers: [registry],
    collect() { this.set({ server_id: idHex(server.memberId) }, 1); },
  });
  // svc extension: the alarms raised in the cluster, by type (what `alarm list` shows); 0 when none is raised.
  new Gauge({
    name: 'svc_server_alarms', help: "Alarms raised in the cluster, by type ('NOSPACE', 'CORRUPT'); 0 when none is.",
    labelNames: ['alarm_type'], registers: [registry],
    collect() {
      for (const t of ['NOSPACE', 'CORRUPT'] as const) this.set({ alarm_type: t }, server.alarms.filter((a) => a.alarm === t).length);
    },
  });
  // Added by 3.6 (the release table lists them): the peers this member knows (1) or saw removed (0), and the
  // feature gates with their values.
  if (release.metricsAdded.includes('svc_network_known_peers')) {
    new Gauge({
      name: 'svc_network_known_peers', help: 'The current number of known peers.',
      labelNames: ['Local', 'Remote'], registers: [registry],
      collect() {
        this.reset();
        const local = idHex(server.memberId);
        for (const m of server.membership.list()) if (m.id !== server.memberId) this.set({ Local: local, Remote: idHex(m.id) }, 1);
        for (const id of server.membership.removed) this.set({ Local: local, Remote: idHex(id) }, 0);
      },
    });
  }
  if (release.metricsAdded.includes('svc_server_feature_enabled')) {
    new Gauge({
      name: 'svc_server_feature_enabled', help: 'Whether or not a feature is enabled. 1 is enabled, 0 is not.',
      labelNames: ['name', 'stage'], registers: [registry],
      collect() {
        for (const [name, g] of Object.entries(release.featureGates)) this.set({ name, stage: g.stage }, (server.opts.featureGates?.get(name) ?? g.def) ? 1 : 0);
      },
    });
  }
  const healthSuccess = new Counter({ name: 'svc_server_health_success', help: 'The total number of successful health checks', registers: [registry] });
  const healthFailures = new Counter({ name: 'svc_server_health_failures', help: 'The total number of failed health checks', registers: [registry] });

  const walFsync = new Histogram({ name: 'svc_disk_wal_fsync_duration_seconds', help: 'The latency distributions of fsync called by WAL.', buckets: WAL_BUCKETS, registers: [registry] });
  const apply = new Histogram({ name: 'svc_server_apply_duration_seconds', help: 'The latency distributions of apply called by the member.', buckets: APPLY_BUCKETS, registers: [registry] });
  const backendCommit = new Histogram({ name: 'svc_disk_backend_commit_duration_seconds', help: 'The latency distributions of commit called by backend.', buckets: Array.from({ length: 14 }, (_, i) => 0.001 * 2 ** i), registers: [registry] });
  server.backend.onCommit = (s) => backendCommit.observe(s);
  server.observers.walFsync = (s) => walFsync.observe(s);
  server.observers.apply = (s) => apply.observe(s);

  // The mvcc counters: 3.3 names them svc_debugging_mvcc_*, 3.4 serves both, 3.5 only svc_mvcc_*.
  const mvcc: Array<[string, string, 'gauge' | 'counter', () => number]> = [
    ['db_total_size_in_bytes', 'Total size of the underlying database physically allocated in bytes.', 'gauge', () => server.backend.size()],
    ['put_total', 'Total number of puts seen by this member.', 'counter', () => server.kv.stats.put],
    ['delete_total', 'Total number of deletes seen by this member.', 'counter', () => server.kv.stats.delete],
    ['txn_total', 'Total number of txns seen by this member.', 'counter', () => server.kv.stats.txn],
    ['range_total', 'Total number of ranges seen by this member.', 'counter', () => server.kv.stats.range],
  ];
  const prefixes: string[] = [];
  if (release.metricsMvccNames) prefixes.push('svc_mvcc_');
  if (release.metricsDebuggingAliases) prefixes.push('svc_debugging_mvcc_');
  for (const p of prefixes) {
    for (const [name, help, kind, value] of mvcc) {
      if (kind === 'gauge') gauge(p + name, help, value);
      else counterFrom(p + name, help, value);
    }
  }
  if (release.metricsMvccNames) {
    gauge('svc_mvcc_db_total_size_in_use_in_bytes', 'Total size of the underlying database logically in use in bytes.', () => server.backend.sizeInUse());
    // lmdb readers never hold a transaction across calls here: reads are synchronous and close at once.
    gauge('svc_mvcc_db_open_read_transactions', 'The number of currently open read transactions', () => 0);
    const hashBuckets = Array.from({ length: 15 }, (_, i) => 0.01 * 2 ** i);
    const hash = new Histogram({ name: 'svc_mvcc_hash_duration_seconds', help: 'The latency distribution of storage hash operation.', buckets: hashBuckets, registers: [registry] });
    const hashRev = new Histogram({ name: 'svc_mvcc_hash_rev_duration_seconds', help: 'The latency distribution of storage hash by revision operation.', buckets: hashBuckets, registers: [registry] });
    server.observers.hash = (s) => hash.observe(s);
    server.observers.hashRev = (s) => hashRev.observe(s);
  }
  const compactionPause = new Histogram({ name: 'svc_debugging_mvcc_db_compaction_pause_duration_milliseconds', help: 'Bucketed histogram of db compaction pause duration.', buckets: Array.from({ length: 13 }, (_, i) => 2 ** i), registers: [registry] });
  const compactionTotal = new Histogram({ name: 'svc_debugging_mvcc_db_compaction_total_duration_milliseconds', help: 'Bucketed histogram of db compaction total duration.', buckets: Array.from({ length: 14 }, (_, i) => 100 * 2 ** i), registers: [registry] });
  const compactionKeys = new Counter({ name: 'svc_debugging_mvcc_db_compaction_keys_total', help: 'Total number of db keys compacted.', registers: [registry] });
  server.observers.compactionPause = (ms) => compactionPause.observe(ms);
  server.observers.compactionDone = (ms, keys) => {
    compactionTotal.observe(ms);
    compactionKeys.inc(keys);
  };
  gauge('svc_debugging_mvcc_keys_total', 'Total number of keys.', () => server.kv.keyCount());
  gauge('svc_debugging_mvcc_current_revision', 'The current revision of store.', () => server.kv.rev());
  gauge('svc_debugging_mvcc_compact_revision', 'The revision of the last compaction in store.', () => server.kv.compactRev());
  return { registry, healthSuccess, healthFailures };
}
