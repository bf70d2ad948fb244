// The unary methods of each service, by name, from the wire contract's method table (server/wire/messages.ts,
// generated from server/wire/proto; streaming methods are served by streams.ts). A service module is an object of
// this shape, so the compiler rejects a missing or misspelled method, a request field read under a wrong name or
// type, and an answer the encoder would not take; a method added to a .proto (after regenerating messages.ts) does
// not build until a module implements it. test/unit/wire/wire.test.ts checks the table against the .proto files.
import { SERVICES, type EncodableResponseOf, type Given, type RequestOf, type ServiceName, type UnaryMethod } from '../../wire/index.js';
import type { RequestMeta } from './auth-gate.js';

/** One unary method of a service, typed from the method table. */
export type MethodHandler<S extends ServiceName, M extends UnaryMethod<S>> = (req: Given<RequestOf<S, M>>, meta?: RequestMeta) => Promise<EncodableResponseOf<S, M>>;

/** A complete implementation of a service's unary methods. */
export type UnaryService<S extends ServiceName> = { readonly [M in UnaryMethod<S>]: MethodHandler<S, M> };

/** Every unary method name (unique across the services, so a name alone finds its method). */
export type UnaryName = { [S in ServiceName]: UnaryMethod<S> }[ServiceName];

/** The handler of a unary method, by its name alone. */
export type HandlerOf<M extends UnaryName> = { [S in ServiceName]: M extends UnaryMethod<S> ? MethodHandler<S, M> : never }[ServiceName];

/**
 * A unary handler found by a name known only at run time (the gRPC server, the gateway): the request must be the
 * method's own message, which the caller decoded with the method's type from the same table.
 */
export type UnaryHandler = (req: object, meta?: RequestMeta) => Promise<object>;

/** Finds a unary method by name (what the gRPC server, the gateway and the Election/Lock recipes call). */
export interface UnaryLookup {
  handler<M extends UnaryName>(name: M): HandlerOf<M> | undefined;
  handler(name: string): UnaryHandler | undefined;
}

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
