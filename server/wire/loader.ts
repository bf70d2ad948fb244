// The one loader of the wire contract (the .proto files under server/wire/proto: the reference's etcdserverpb,
// mvccpb, authpb, v3electionpb and v3lockpb packages plus grpc.health.v1). Nothing is read or parsed at import
// time: the first call that needs a definition reads the files once into one protobufjs Root, and the gRPC
// service definitions (server and clients), the JSON gateway's message types and the descriptors all come from
// that Root.
//
// Decoding, and what handlers therefore see and may return (the options @grpc/proto-loader would be given):
// - keepCase: field names exactly as in the .proto (`range_end`, `cluster_id`, `peerURLs`, `TTL`).
// - longs: String. Every int64/uint64 arrives as a decimal string ("0", "7587862072907010052").
//   Revisions would fit a JS number, but lease ids and member/cluster ids use all 64 bits, and one
//   rule for every 64-bit field is safer than a per-field list. Handlers may RETURN numbers or
//   decimal strings for 64-bit fields; values above 2^53 (ids) must be strings to stay exact.
// - enums: String. Enum fields arrive as their names ("ASCEND", "PUT"); numbers or names may be returned.
// - bytes: Buffer (protobufjs's default under Node). Return Buffers (or Uint8Arrays) for bytes fields.
// - defaults: true. Absent scalar fields read as their zero value ("0", "", false, empty Buffer,
//   first enum name), absent repeated fields as [], absent message fields as null, so handlers need
//   no `?? 0` everywhere. oneof members are the exception: only the member that was sent is
//   present, and oneofs: true adds a virtual property naming it
//   (e.g. `op.request === 'request_put'`, `compare.target_union === 'value'`).
// The service definitions are built as @grpc/proto-loader builds them (test/unit/wire/wire.test.ts compares the
// two), without importing it: it parses descriptor files when imported.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { ServiceName } from './messages.js';
import { CodedError } from '../coded-error.js';

/** How messages are decoded (protobufjs `toObject` options; see the header). */
export const decodeOptions: protobuf.IConversionOptions = {
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
export class ProtoLoadError extends CodedError<'PROTO_LOAD'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PROTO_LOAD', message, options);
  }
}

/** What the loader has done so far (tests prove nothing happens before first use). */
export interface WireLoadStats {
  /** Times the .proto files were parsed into a Root (1 after first use, per proto dir). */
  loads: number;
  /** Every .proto file read, in order. */
  filesRead: string[];
}

const stats: WireLoadStats = { loads: 0, filesRead: [] };

/** A copy of the loader's counters. */
export function wireLoadStats(): WireLoadStats {
  return { loads: stats.loads, filesRead: [...stats.filesRead] };
}

let protoDirOverride: string | undefined;
let cachedRoot: protobuf.Root | undefined;
let cachedServices: Map<string, grpc.ServiceDefinition> | undefined;
let cachedClients: ServiceClients | undefined;

/**
 * Where the .proto files are when they are not found next to the code: the CLIs hand in SVC_PROTO_DIR (the
 * environment is read in the cli/ folders only). Call before the first load; undefined or empty: search.
 */
export function setProtoDir(dir: string | undefined): void {
  protoDirOverride = dir ? dir : undefined;
  cachedRoot = undefined;
  cachedServices = undefined;
  cachedClients = undefined;
}

/**
 * Finds server/wire/proto. The compiled module lives in <outDir>/server/wire/, and tsc does not copy .proto
 * files, so walk up from this module until a folder holds server/wire/proto (the source tree, also shipped in
 * the image). setProtoDir overrides the search.
 */
export function protoRoot(): string {
  if (protoDirOverride) return protoDirOverride;
  const marker = join('etcdserverpb', 'rpc.proto');
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    for (const candidate of [join(dir, 'proto'), join(dir, 'server', 'wire', 'proto')]) {
      if (existsSync(join(candidate, marker))) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new ProtoLoadError(
    `cannot find server/wire/proto/${marker} above ${fileURLToPath(import.meta.url)}; set SVC_PROTO_DIR`,
  );
}

/** The parsed and resolved definitions (read on first use, then cached: parsing takes tens of milliseconds). */
export function wireRoot(): protobuf.Root {
  if (!cachedRoot) {
    const dir = protoRoot();
    const root = new protobuf.Root();
    // imports ("mvccpb/kv.proto") are relative to the proto root, as protoc's include path
    root.resolvePath = (_origin, target) => {
      const file = isAbsolute(target) ? target : join(dir, target);
      stats.filesRead.push(file);
      return file;
    };
    try {
      root.loadSync([...protoFiles], { keepCase: true });
      root.resolveAll();
    } catch (err) {
      throw new ProtoLoadError(`cannot load the gRPC definitions from ${dir}: ${(err as Error).message}`, { cause: err });
    }
    stats.loads++;
    cachedRoot = root;
  }
  return cachedRoot;
}

/** A message type by its fully qualified name ("etcdserverpb.PutRequest"): what the JSON gateway converts with. */
export function messageType(name: string): protobuf.Type {
  return wireRoot().lookupType(name);
}

/** Encodes a handler's plain object as a message of `type` (exported for its tests). */
export function serializer(type: protobuf.Type): grpc.serialize<object> {
  // fromObject makes a message instance of every nested object before encode. Only enum names ("PUT") need it:
  // encode takes plain objects and converts numbers, 64-bit strings and base64 strings the same way. A put, range
  // or txn answer has no enum, and skipping the copy is a tenth of a range's encoding cost.
  const direct = !reachesEnum(type, new Set());
  return (arg) => {
    if (Array.isArray(arg)) throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`);
    // under Node protobufjs writes into a Buffer: no copy
    return type.encode(direct ? arg : type.fromObject(arg)).finish() as Buffer;
  };
}

/** Does a message of `type`, at any depth, hold an enum field? */
function reachesEnum(type: protobuf.Type, seen: Set<protobuf.Type>): boolean {
  if (seen.has(type)) return false;
  seen.add(type);
  return type.fieldsArray.some((f) => {
    const t = f.resolve().resolvedType;
    return t instanceof protobuf.Enum || (t instanceof protobuf.Type && reachesEnum(t, seen));
  });
}

function deserializer(type: protobuf.Type): grpc.deserialize<object> {
  return (buf) => type.toObject(type.decode(buf), decodeOptions);
}

/** lodash's camelCase of a method name ("HashKV" -> "hashKv"): grpc-js also answers to this `originalName`. */
export function lowerCamel(name: string): string {
  const words = name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g) ?? [name];
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
}

function buildService(fq: string): grpc.ServiceDefinition {
  const svc = wireRoot().lookup(fq);
  if (!(svc instanceof protobuf.Service)) throw new ProtoLoadError(`service ${fq} missing from the gRPC definitions`);
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of svc.methodsArray) {
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    def[m.name] = {
      path: `/${fq}/${m.name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: lowerCamel(m.name),
    };
  }
  return def as grpc.ServiceDefinition;
}

/** The gRPC definition of one service by its fully qualified name (built on first use, cached). */
export function serviceDefinition(fq: ServiceName): grpc.ServiceDefinition {
  cachedServices ??= new Map();
  let def = cachedServices.get(fq);
  if (!def) {
    def = buildService(fq);
    cachedServices.set(fq, def);
  }
  return def;
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
} as const satisfies Record<string, ServiceName>;

export type ServiceKey = keyof typeof serviceNames;

/**
 * Service definitions for `server.addService(def, impl)`, loaded on first use: kv (Range, Put, DeleteRange, Txn,
 * Compact), watch (Watch, a bidirectional stream), lease (LeaseGrant, LeaseRevoke, LeaseKeepAlive stream,
 * LeaseTimeToLive, LeaseLeases), cluster (MemberAdd/Remove/Update/List/Promote), maintenance (Alarm, Status,
 * Defragment, Hash, HashKV, Snapshot stream, MoveLeader, Downgrade), auth (AuthEnable/Disable/Status,
 * Authenticate, User*, Role*), health (Check, Watch), election (Campaign, Proclaim, Leader, Observe stream,
 * Resign), lock (Lock, Unlock).
 */
export function serviceDefinitions(): Record<ServiceKey, grpc.ServiceDefinition> {
  const out = {} as Record<ServiceKey, grpc.ServiceDefinition>;
  for (const [key, fq] of Object.entries(serviceNames) as Array<[ServiceKey, ServiceName]>) out[key] = serviceDefinition(fq);
  return out;
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

/** Client constructors built from the same definitions the server uses (cached). */
export function loadClients(): ServiceClients {
  if (!cachedClients) {
    const make = (name: string, fq: ServiceName) => grpc.makeGenericClientConstructor(serviceDefinition(fq), name);
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

/**
 * The files' FileDescriptorProtos, encoded (what @grpc/proto-loader attaches to every definition; the
 * wire-compatibility test compares them with the reference's). Loads protobufjs's descriptor extension on
 * first use: it parses descriptor.proto when imported.
 */
export function fileDescriptorProtos(): Buffer[] {
  const require = createRequire(import.meta.url);
  const descriptor = require('protobufjs/ext/descriptor') as { FileDescriptorProto: protobuf.Type };
  const root = wireRoot() as protobuf.Root & { toDescriptor(syntax: string): { file: protobuf.Message[] } };
  return root.toDescriptor('proto3').file.map((f) => Buffer.from(descriptor.FileDescriptorProto.encode(f).finish()));
}
