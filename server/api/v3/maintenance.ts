// The Maintenance service's unary calls (etcdserverpb.Maintenance; Snapshot is a stream, in streams.ts), and
// grpc.health.v1.Health/Check.
import { Errors, type ServerError } from '../../core/errors.js';
import type { AlarmType } from '../../core/requests.js';
import type { AlarmEntry, ApiLimits, KvMaintenance, MaintenanceCore, Observers, Proposals, ReadBarrier } from '../../core/interfaces.js';
import type { AuthGate } from './auth-gate.js';
import type { Headers } from './headers.js';
import type { HealthService, MaintenanceService } from './service-methods.js';
import { downgradeResponseVersion, parseDowngradeTarget, validateDowngrade, type DowngradeRefusal } from '../../cluster/downgrade.js';

const REFUSALS: Record<DowngradeRefusal, () => ServerError> = {
  'wrong-format': Errors.downgradeWrongFormat,
  'no-cluster-version': Errors.downgradeNoClusterVersion,
  'invalid-target': Errors.downgradeInvalidTarget,
  'in-progress': Errors.downgradeInProgress,
};

export interface MaintenanceDeps {
  core: MaintenanceCore;
  kv: KvMaintenance;
  barrier: ReadBarrier;
  proposals: Proposals;
  observers: Observers;
  limits: ApiLimits;
  gate: AuthGate;
  headers: Headers;
}

export function maintenanceService(d: MaintenanceDeps): MaintenanceService {
  const { core, gate, headers, proposals } = d;
  return {
    Alarm: async (req, meta) => {
      const action = req.action || 'GET';
      if (action !== 'GET') gate.requireAdmin(meta);
      const alarm: AlarmType = req.alarm || 'NONE';
      const memberId = BigInt(req.memberID ?? 0);
      let list: readonly AlarmEntry[];
      if (action === 'GET') {
        // Like the reference (which sends it through the log), a listing reflects every alarm raised before it.
        await d.barrier.linearizableReadNotify();
        list = core.alarms.filter((a) => (memberId === 0n || a.memberId === memberId) && (alarm === 'NONE' || a.alarm === alarm));
      } else {
        list = await proposals.propose({ id: proposals.nextRequestId(), kind: 'alarm', alarm: { action, memberId, alarm } });
      }
      return { header: headers.header(), alarms: list.map((a) => ({ memberID: a.memberId.toString(), alarm: a.alarm })) };
    },

    Status: async () => {
      const st = core.status();
      const errors = core.alarms.map((a) => `memberID:${a.memberId} alarm:${a.alarm} `);
      if (st.leader === 0n) errors.push('etcdserver: no leader');
      return {
        header: headers.header(),
        version: d.limits.release.version,
        dbSize: st.dbSize,
        leader: st.leader.toString(),
        raftIndex: st.commitIndex,
        raftTerm: st.term,
        raftAppliedIndex: st.appliedIndex,
        errors,
        dbSizeInUse: st.dbSizeInUse,
        isLearner: st.isLearner,
        // 3.6's fields: absent (their defaults) before
        ...(d.limits.release.statusStorageFields ? { storageVersion: st.storageVersion ?? '', dbSizeQuota: st.quotaBytes, downgradeInfo: st.downgrade } : {}),
      };
    },

    Defragment: async (_req, meta) => {
      gate.requireAdmin(meta);
      // Catch up with what the cluster committed before this request (a compaction the leader already answered may
      // not be applied here yet), so the copy leaves out what it deletes. Without a leader, defragment anyway.
      await d.barrier.linearizableReadNotify().catch(() => undefined);
      await d.kv.defrag();
      return { header: headers.header() };
    },

    Hash: async (_req, meta) => {
      gate.requireAdmin(meta);
      const t0 = process.hrtime.bigint();
      const hash = d.kv.hash();
      d.observers.hash?.(Number(process.hrtime.bigint() - t0) / 1e9);
      return { header: headers.header(), hash };
    },

    HashKV: async (req, meta) => {
      gate.requireAdmin(meta);
      const t0 = process.hrtime.bigint();
      const r = d.kv.hashKV(Number(req.revision ?? 0));
      d.observers.hashRev?.(Number(process.hrtime.bigint() - t0) / 1e9);
      // No hash_revision: the reference fills it only from 3.6 on (3.5.21 answers without it).
      return { header: headers.header(r.revision), hash: r.hash, compact_revision: r.compactRevision };
    },

    MoveLeader: async (req, meta) => {
      gate.requireAdmin(meta);
      await core.moveLeader(BigInt(req.targetID ?? 0));
      return { header: headers.header() };
    },

    /**
     * Maintenance/Downgrade: VALIDATE checks a target (one minor below the cluster version, no job in progress),
     * ENABLE also starts the job through the log, CANCEL ends it. The answer's version is the cluster version.
     */
    Downgrade: async (req, meta) => {
      if (!core.capable('3.5')) throw Errors.unavailableUntil('Downgrade', '3.5');
      gate.requireAdmin(meta);
      const rules = d.limits.release.downgrade;
      const answer = () => ({ header: headers.header(), version: downgradeResponseVersion(rules, core.clusterVersion()) });
      const validate = async (): Promise<string> => {
        const target = String(req.version ?? '');
        if (parseDowngradeTarget(target) === undefined) throw Errors.downgradeWrongFormat();
        if (core.clusterVersion() === undefined) throw Errors.downgradeNoClusterVersion();
        // on the newest job and cluster version
        await d.barrier.linearizableReadNotify();
        const v = validateDowngrade(target, core.clusterVersion(), core.downgradeInfo());
        if (!v.ok) throw REFUSALS[v.refusal]();
        return v.target;
      };
      switch (req.action ?? 'VALIDATE') {
        case 'VALIDATE':
          await validate();
          return answer();
        case 'ENABLE':
          try {
            await core.setDowngrade(`${await validate()}.0`);
          } catch (e) {
            core.logger.warn('reject downgrade request', { error: (e as Error).message });
            throw e;
          }
          return answer();
        case 'CANCEL':
          try {
            await d.barrier.linearizableReadNotify();
            if (!core.downgradeInfo().enabled) throw Errors.noInflightDowngrade();
            await core.setDowngrade(undefined);
          } catch (e) {
            // 3.6+ answers success whatever happened
            if (rules.cancelWithoutJob === 'error') throw e;
            core.logger.warn('failed to cancel downgrade', { error: (e as Error).message });
          }
          return answer();
        default:
          throw Errors.unknownMethod();
      }
    },
  };
}

/** grpc.health.v1.Health/Check: SERVING while the member has a leader. */
export function healthService(core: Pick<MaintenanceCore, 'lead'>): HealthService {
  return {
    Check: async () => ({ status: core.lead !== 0n ? 'SERVING' : 'NOT_SERVING' }),
  };
}
