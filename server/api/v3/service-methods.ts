// The unary methods of each etcdserverpb service, by name, as in server/api/proto/etcdserverpb/rpc.proto (streaming
// methods are served by streams.ts). A service module is an object of this shape, so the compiler rejects a
// missing or misspelled method; test/unit/api/service-methods.test.ts checks the lists against the loaded
// definitions.
import type { RequestMeta } from './auth-gate.js';
import type { Pb } from './convert.js';

export type UnaryHandler = (req: Pb, meta?: RequestMeta) => Promise<Pb>;

export const KV_METHODS = ['Range', 'Put', 'DeleteRange', 'Txn', 'Compact'] as const;
export const LEASE_METHODS = ['LeaseGrant', 'LeaseRevoke', 'LeaseTimeToLive', 'LeaseLeases'] as const;
export const CLUSTER_METHODS = ['MemberAdd', 'MemberRemove', 'MemberUpdate', 'MemberList', 'MemberPromote'] as const;
export const MAINTENANCE_METHODS = ['Alarm', 'Status', 'Defragment', 'Hash', 'HashKV', 'MoveLeader', 'Downgrade'] as const;
export const AUTH_METHODS = [
  'AuthEnable', 'AuthDisable', 'AuthStatus', 'Authenticate',
  'UserAdd', 'UserGet', 'UserList', 'UserDelete', 'UserChangePassword', 'UserGrantRole', 'UserRevokeRole',
  'RoleAdd', 'RoleGet', 'RoleList', 'RoleDelete', 'RoleGrantPermission', 'RoleRevokePermission',
] as const;
export const HEALTH_METHODS = ['Check'] as const;

/** Finds a unary method by name (what the gRPC server, the gateway and the Election/Lock recipes call). */
export interface UnaryLookup {
  handler(name: string): UnaryHandler | undefined;
}

type Methods<T extends readonly string[]> = { readonly [K in T[number]]: UnaryHandler };

export type KvService = Methods<typeof KV_METHODS>;
export type LeaseService = Methods<typeof LEASE_METHODS>;
export type ClusterService = Methods<typeof CLUSTER_METHODS>;
export type MaintenanceService = Methods<typeof MAINTENANCE_METHODS>;
export type AuthService = Methods<typeof AUTH_METHODS>;
export type HealthService = Methods<typeof HEALTH_METHODS>;

/** Fully qualified service name -> the unary methods svc implements for it. */
export const UNARY_METHODS = {
  'etcdserverpb.KV': KV_METHODS,
  'etcdserverpb.Lease': LEASE_METHODS,
  'etcdserverpb.Cluster': CLUSTER_METHODS,
  'etcdserverpb.Maintenance': MAINTENANCE_METHODS,
  'etcdserverpb.Auth': AUTH_METHODS,
  'grpc.health.v1.Health': HEALTH_METHODS,
} as const;
