// Loads the wire definitions under server/api/proto (the reference's etcdserverpb/mvccpb/authpb,
// v3electionpb and v3lockpb packages plus grpc.health.v1) once per process, and exposes them as service definitions for
// `grpc.Server.addService` and as client constructors.
//
// Decoding options, and what handlers therefore see and may return:
// - keepCase: field names exactly as in the .proto (`range_end`, `cluster_id`, `peerURLs`, `TTL`).
// - longs: String. Every int64/uint64 arrives as a decimal string ("0", "7587862072907010052").
//   Revisions would fit a JS number, but lease ids and member/cluster ids use all 64 bits, and one
//   rule for every 64-bit field is safer than a per-field list. Handlers may RETURN numbers or
//   decimal strings for 64-bit fields; values above 2^53 (ids) must be strings to stay exact.
// - enums: String. Enum fields arrive as their names ("ASCEND", "PUT"); numbers or names may be returned.
// - bytes: Buffer (the loader's default). Return Buffers (or Uint8Arrays) for bytes fields.
// - defaults: true. Absent scalar fields read as their zero value ("0", "", false, empty Buffer,
//   first enum name), absent repeated fields as [], absent message fields as null, so handlers need
//   no `?? 0` everywhere. oneof members are the exception: only the member that was sent is
//   present, and oneofs: true adds a virtual property naming it
//   (e.g. `op.request === 'request_put'`, `compare.target_union === 'value'`).

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Options given to @grpc/proto-loader; exported so tests and tools decode the same way. */
export const protoLoaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The .proto files, relative to the proto root. */
export const protoFiles = [
  'etcdserverpb/rpc.proto',
  'mvccpb/kv.proto',
  'authpb/auth.proto',
  'grpc/health/v1/health.proto',
  'v3electionpb/v3election.proto',
  'v3lockpb/v3lock.proto',
] as const;

/** Raised when the .proto files cannot be found or parsed. */
export class ProtoLoadError extends Error {
  readonly code = 'PROTO_LOAD';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProtoLoadError';
  }
}

let protoDirOverride: string | undefined;

/**
 * Where the .proto files are when they are not found next to the code: the CLIs hand in SVC_PROTO_DIR (the
 * environment is read in server/cli/ only). Call before the first load; undefined or empty: search.
 */
export function setProtoDir(dir: string | undefined): void {
  protoDirOverride = dir ? dir : undefined;
  cachedPackage = undefined;
  cachedClients = undefined;
}

/**
 * Finds server/api/proto. The compiled module lives in <outDir>/server/api/, and tsc does not copy
 * .proto files, so walk up from this module until a folder holds server/api/proto (the source
 * tree, also shipped in the image). setProtoDir overrides the search.
 */
export function protoRoot(): string {
  if (protoDirOverride) return protoDirOverride;
  const marker = join('etcdserverpb', 'rpc.proto');
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    for (const candidate of [join(dir, 'proto'), join(dir, 'server', 'api', 'proto')]) {
      if (existsSync(join(candidate, marker))) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new ProtoLoadError(
    `cannot find server/api/proto/${marker} above ${fileURLToPath(import.meta.url)}; set SVC_PROTO_DIR`,
  );
}

let cachedPackage: protoLoader.PackageDefinition | undefined;

/** The parsed package definition (cached: parsing takes tens of milliseconds). */
export function packageDefinition(): protoLoader.PackageDefinition {
  if (!cachedPackage) {
    const root = protoRoot();
    try {
      cachedPackage = protoLoader.loadSync([...protoFiles], { ...protoLoaderOptions, includeDirs: [root] });
    } catch (err) {
      throw new ProtoLoadError(`cannot load the gRPC definitions from ${root}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return cachedPackage;
}

function service(name: string): grpc.ServiceDefinition {
  const def = packageDefinition()[name];
  // Message and enum entries carry a `format`; services are plain maps of method definitions.
  if (!def || 'format' in def) {
    throw new ProtoLoadError(`service ${name} missing from the gRPC definitions`);
  }
  return def as unknown as grpc.ServiceDefinition;
}

/** Fully qualified names of the services we serve. */
export const serviceNames = {
  kv: 'etcdserverpb.KV',
  watch: 'etcdserverpb.Watch',
  lease: 'etcdserverpb.Lease',
  cluster: 'etcdserverpb.Cluster',
  maintenance: 'etcdserverpb.Maintenance',
  auth: 'etcdserverpb.Auth',
  health: 'grpc.health.v1.Health',
  election: 'v3electionpb.Election',
  lock: 'v3lockpb.Lock',
} as const;

export type ServiceKey = keyof typeof serviceNames;

/**
 * Service definitions for `server.addService(def, impl)`, loaded on first use (nothing is read at import time):
 * kv (Range, Put, DeleteRange, Txn, Compact), watch (Watch, a bidirectional stream), lease (LeaseGrant,
 * LeaseRevoke, LeaseKeepAlive stream, LeaseTimeToLive, LeaseLeases), cluster (MemberAdd/Remove/Update/List/
 * Promote), maintenance (Alarm, Status, Defragment, Hash, HashKV, Snapshot stream, MoveLeader, Downgrade), auth
 * (AuthEnable/Disable/Status, Authenticate, User*, Role*), health (Check, Watch), election (Campaign, Proclaim,
 * Leader, Observe stream, Resign), lock (Lock, Unlock).
 */
export function serviceDefinitions(): Record<ServiceKey, grpc.ServiceDefinition> {
  return {
    kv: service(serviceNames.kv),
    watch: service(serviceNames.watch),
    lease: service(serviceNames.lease),
    cluster: service(serviceNames.cluster),
    maintenance: service(serviceNames.maintenance),
    auth: service(serviceNames.auth),
    health: service(serviceNames.health),
    election: service(serviceNames.election),
    lock: service(serviceNames.lock),
  };
}

/** Client constructors for every service (`new clients.KV(target, creds)`). */
export interface ServiceClients {
  KV: grpc.ServiceClientConstructor;
  Watch: grpc.ServiceClientConstructor;
  Lease: grpc.ServiceClientConstructor;
  Cluster: grpc.ServiceClientConstructor;
  Maintenance: grpc.ServiceClientConstructor;
  Auth: grpc.ServiceClientConstructor;
  Health: grpc.ServiceClientConstructor;
  Election: grpc.ServiceClientConstructor;
  Lock: grpc.ServiceClientConstructor;
}

let cachedClients: ServiceClients | undefined;

/** Client constructors built from the same definitions the server uses (cached). */
export function loadClients(): ServiceClients {
  if (!cachedClients) {
    const make = (name: string, fq: string) =>
      grpc.makeGenericClientConstructor(service(fq) as grpc.ServiceDefinition, name);
    cachedClients = {
      KV: make('KV', serviceNames.kv),
      Watch: make('Watch', serviceNames.watch),
      Lease: make('Lease', serviceNames.lease),
      Cluster: make('Cluster', serviceNames.cluster),
      Maintenance: make('Maintenance', serviceNames.maintenance),
      Auth: make('Auth', serviceNames.auth),
      Health: make('Health', serviceNames.health),
      Election: make('Election', serviceNames.election),
      Lock: make('Lock', serviceNames.lock),
    };
  }
  return cachedClients;
}
