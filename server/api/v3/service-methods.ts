// The unary methods of each service, by name, from the wire contract's method table (server/wire/messages.ts,
// generated from server/wire/proto; streaming methods are served by streams.ts). A service module is an object of
// this shape, so the compiler rejects a missing or misspelled method, and a method added to a .proto (after
// regenerating messages.ts) does not build until a module implements it. test/unit/wire/wire.test.ts checks the
// table against the .proto files.
import { SERVICES, type ServiceName, type UnaryMethod } from '../../wire/index.js';
import type { RequestMeta } from './auth-gate.js';
import type { Pb } from './convert.js';

export type UnaryHandler = (req: Pb, meta?: RequestMeta) => Promise<Pb>;

/** Finds a unary method by name (what the gRPC server, the gateway and the Election/Lock recipes call). */
export interface UnaryLookup {
  handler(name: string): UnaryHandler | undefined;
}

/** A complete implementation of a service's unary methods. */
export type UnaryService<S extends ServiceName> = { readonly [K in UnaryMethod<S>]: UnaryHandler };

export type KvService = UnaryService<'etcdserverpb.KV'>;
export type LeaseService = UnaryService<'etcdserverpb.Lease'>;
export type ClusterService = UnaryService<'etcdserverpb.Cluster'>;
export type MaintenanceService = UnaryService<'etcdserverpb.Maintenance'>;
export type AuthService = UnaryService<'etcdserverpb.Auth'>;
export type HealthService = UnaryService<'grpc.health.v1.Health'>;
export type ElectionService = UnaryService<'v3electionpb.Election'>;
export type LockService = UnaryService<'v3lockpb.Lock'>;

/** The unary methods of a service, from the method table (for code and tests that walk them). */
export function unaryMethods(service: ServiceName): string[] {
  return Object.entries(SERVICES[service])
    .filter(([, m]) => !m.requestStream && !m.responseStream)
    .map(([name]) => name);
}
