// The JSON gateway for the gRPC API (the reference mounts it at /v3/). A request body is JSON with the proto's
// field names (snake_case or lowerCamelCase), bytes in base64 and 64-bit integers as strings or numbers; it is
// turned into exactly the message shape the gRPC handlers receive, and the answer is turned back into JSON the
// way the reference prints it (original field names, zero values left out, 64-bit integers as strings).
import protobuf from 'protobufjs';
import { messageType, type MessageName, type Messages } from '../wire/index.js';
import { CodedError } from '../coded-error.js';

/** A malformed gateway request: answered 400 with the reference's error JSON (code 3 = InvalidArgument). */
export class GatewayInputError extends CodedError<'GATEWAY_INPUT'> {
  constructor(message: string) {
    super('GATEWAY_INPUT', message);
  }
}

/** Message nesting a gateway request may have (a txn level is two messages). */
const MAX_JSON_DEPTH = 80;

/**
 * A JSON number as its literal text: the gateway's request bodies are read with {@link parseGatewayJson}, which
 * keeps every number this way so a 64-bit integer (a lease ID, a revision) reaches its field exactly, where
 * JSON.parse would round it to the nearest double (8110779400350537698 -> 8110779400350538000).
 */
export class JsonNumber {
  constructor(readonly text: string) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * JSON text -> values as JSON.parse gives them, except that numbers are {@link JsonNumber}s. Syntax errors are
 * JSON.parse's (it checks the text first), so the reading below only ever sees valid JSON.
 */
export function parseGatewayJson(text: string): unknown {
  JSON.parse(text);
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const str = (): string => {
    let j = i + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const s = JSON.parse(text.slice(i, j + 1)) as string;
    i = j + 1;
    return s;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') return i++, o;
      for (;;) {
        ws();
        const k = str();
        ws();
        i++; // ':'
        // defineProperty: a key such as "__proto__" is an own property, as JSON.parse makes it.
        Object.defineProperty(o, k, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i++] === '}') return o;
      }
    }
    if (c === '[') {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === ']') return i++, a;
      for (;;) {
        a.push(value());
        ws();
        if (text[i++] === ']') return a;
      }
    }
    if (c === 't') return (i += 4), true;
    if (c === 'f') return (i += 5), false;
    if (c === 'n') return (i += 4), null;
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text)!;
    i += m[0].length;
    return new JsonNumber(m[0]);
  };
  return value();
}

/** The Go type the reference's gateway decodes a proto integer field into (its error texts name it). */
const GO_INT: Record<string, string> = {
  int64: 'int64', sint64: 'int64', sfixed64: 'int64', uint64: 'uint64', fixed64: 'uint64',
  int32: 'int32', sint32: 'int32', sfixed32: 'int32', uint32: 'uint32', fixed32: 'uint32',
};

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/;

/** Rename lowerCamel keys to the proto names, check types, refuse unknown fields: before protobufjs sees it. */
function normalize(type: protobuf.Type, json: unknown, path: string, depth = 0): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) throw new GatewayInputError(`${path}: nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (json === null || typeof json !== 'object' || Array.isArray(json) || json instanceof JsonNumber) {
    throw new GatewayInputError(`${path || 'body'}: expected a JSON object`);
  }
  const out: Record<string, unknown> = {};
  const byName = new Map<string, protobuf.Field>();
  for (const f of type.fieldsArray) {
    byName.set(f.name, f);
    byName.set(camel(f.name), f);
  }
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
    const f = byName.get(k);
    if (!f) throw new GatewayInputError(`unknown field "${k}" in ${type.name}`);
    if (v === null) continue;
    const at = path ? `${path}.${k}` : k;
    const one = (x: unknown): unknown => normalizeValue(f, x, at, depth);
    out[f.name] = f.repeated ? (Array.isArray(v) ? v.map(one) : badType(at, 'an array')) : one(v);
  }
  return out;
}

function badType(at: string, what: string): never {
  throw new GatewayInputError(`${at}: expected ${what}`);
}

function normalizeValue(f: protobuf.Field, v: unknown, at: string, depth: number): unknown {
  f.resolve();
  if (f.resolvedType instanceof protobuf.Type) return normalize(f.resolvedType, v, at, depth + 1);
  if (v instanceof JsonNumber && GO_INT[f.type] !== undefined) return integerLiteral(f, v.text);
  if (v instanceof JsonNumber) v = Number(v.text);
  if (f.resolvedType instanceof protobuf.Enum) {
    if (typeof v === 'number' || (typeof v === 'string' && v in f.resolvedType.values)) return v;
    return badType(at, `one of ${Object.keys(f.resolvedType.values).join(', ')}`);
  }
  switch (f.type) {
    case 'bytes':
      if (typeof v !== 'string' || !BASE64.test(v)) return badType(at, 'a base64 string');
      return Buffer.from(v, 'base64');
    case 'string':
      return typeof v === 'string' ? v : badType(at, 'a string');
    case 'bool':
      return typeof v === 'boolean' ? v : badType(at, 'true or false');
    case 'int64': case 'uint64': case 'sint64': case 'fixed64': case 'sfixed64':
    case 'int32': case 'uint32': case 'sint32': case 'fixed32': case 'sfixed32': {
      const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v : badType(at, 'an integer');
      if (!/^-?\d+$/.test(s)) return badType(at, 'an integer');
      if (f.type.startsWith('u') && s.startsWith('-')) return badType(at, 'a non-negative integer');
      const bits = f.type.endsWith('64') ? 64n : 32n;
      const signed = !(f.type.startsWith('u') || f.type === 'fixed32' || f.type === 'fixed64');
      const n = BigInt(s);
      const [lo, hi] = signed ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n] : [0n, (1n << bits) - 1n];
      if (n < lo || n > hi) return badType(at, `an integer in the range of ${f.type}`);
      return s;
    }
    default:
      return typeof v === 'number' ? v : badType(at, 'a number');
  }
}

/**
 * An integer field given as a JSON number: its literal exactly, which must be an integer in the field's range.
 * Otherwise the reference's error (Go's encoding/json refuses 1e3, 5.5 and out-of-range numbers for integers).
 */
function integerLiteral(f: protobuf.Field, text: string): string {
  const go = GO_INT[f.type];
  const bits = go.endsWith('64') ? 64n : 32n;
  const [lo, hi] = go.startsWith('u') ? [0n, (1n << bits) - 1n] : [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n];
  const n = /^-?\d+$/.test(text) ? BigInt(text) : undefined;
  if (n === undefined || n < lo || n > hi) throw new GatewayInputError(`json: cannot unmarshal number ${text} into Go value of type ${go}`);
  return n.toString();
}

/** JSON body -> the message object a gRPC handler receives (same options as the gRPC loader). */
export function jsonToMessage<N extends MessageName>(typeName: N, body: unknown): Messages[N];
export function jsonToMessage(typeName: string, body: unknown): object;
export function jsonToMessage(typeName: string, body: unknown): object {
  const type = messageType(typeName);
  const norm = normalize(type, body ?? {}, '');
  const msg = type.fromObject(norm);
  return type.toObject(msg, { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true });
}

/** A handler's answer -> the JSON the reference's gateway prints. */
export function messageToJson(typeName: string, obj: object): unknown {
  const type = messageType(typeName);
  return strip(type, type.toObject(type.fromObject(obj), { longs: String, enums: String, bytes: String, defaults: false, oneofs: false }));
}

/** Leave out zero values, as proto3 JSON without EmitDefaults does. */
function strip(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    f.resolve();
    if (f.repeated) {
      const arr = v as unknown[];
      if (arr.length === 0) continue;
      out[f.name] = f.resolvedType instanceof protobuf.Type ? arr.map((x) => strip(f.resolvedType as protobuf.Type, x as Record<string, unknown>)) : arr;
    } else if (f.resolvedType instanceof protobuf.Type) {
      out[f.name] = strip(f.resolvedType, v as Record<string, unknown>);
    } else if (f.resolvedType instanceof protobuf.Enum) {
      if (f.resolvedType.values[v as string] !== 0) out[f.name] = v;
    } else if (v !== '0' && v !== 0 && v !== '' && v !== false) {
      out[f.name] = v;
    }
  }
  return out;
}

/** The gateway's routes: path -> the service method and its message types. */
export interface GatewayRoute {
  method: string;
  request: string;
  response: string;
  minRelease?: string;
}

const r = (method: string, request: string, response: string, minRelease?: string): GatewayRoute => ({
  method, request: `etcdserverpb.${request}`, response: `etcdserverpb.${response}`, minRelease,
});

const pkg = (p: string, method: string, request: string, response: string): GatewayRoute => ({
  method, request: `${p}.${request}`, response: `${p}.${response}`,
});

export const GATEWAY_ROUTES: Record<string, GatewayRoute> = {
  '/v3/kv/range': r('Range', 'RangeRequest', 'RangeResponse'),
  '/v3/kv/put': r('Put', 'PutRequest', 'PutResponse'),
  '/v3/kv/deleterange': r('DeleteRange', 'DeleteRangeRequest', 'DeleteRangeResponse'),
  '/v3/kv/txn': r('Txn', 'TxnRequest', 'TxnResponse'),
  '/v3/kv/compaction': r('Compact', 'CompactionRequest', 'CompactionResponse'),
  '/v3/lease/grant': r('LeaseGrant', 'LeaseGrantRequest', 'LeaseGrantResponse'),
  '/v3/lease/revoke': r('LeaseRevoke', 'LeaseRevokeRequest', 'LeaseRevokeResponse'),
  '/v3/kv/lease/revoke': r('LeaseRevoke', 'LeaseRevokeRequest', 'LeaseRevokeResponse'),
  '/v3/lease/timetolive': r('LeaseTimeToLive', 'LeaseTimeToLiveRequest', 'LeaseTimeToLiveResponse'),
  '/v3/kv/lease/timetolive': r('LeaseTimeToLive', 'LeaseTimeToLiveRequest', 'LeaseTimeToLiveResponse'),
  '/v3/lease/leases': r('LeaseLeases', 'LeaseLeasesRequest', 'LeaseLeasesResponse'),
  '/v3/kv/lease/leases': r('LeaseLeases', 'LeaseLeasesRequest', 'LeaseLeasesResponse'),
  '/v3/cluster/member/add': r('MemberAdd', 'MemberAddRequest', 'MemberAddResponse'),
  '/v3/cluster/member/remove': r('MemberRemove', 'MemberRemoveRequest', 'MemberRemoveResponse'),
  '/v3/cluster/member/update': r('MemberUpdate', 'MemberUpdateRequest', 'MemberUpdateResponse'),
  '/v3/cluster/member/list': r('MemberList', 'MemberListRequest', 'MemberListResponse'),
  '/v3/cluster/member/promote': r('MemberPromote', 'MemberPromoteRequest', 'MemberPromoteResponse'),
  '/v3/maintenance/alarm': r('Alarm', 'AlarmRequest', 'AlarmResponse'),
  '/v3/maintenance/status': r('Status', 'StatusRequest', 'StatusResponse'),
  '/v3/maintenance/defragment': r('Defragment', 'DefragmentRequest', 'DefragmentResponse'),
  '/v3/maintenance/hash': r('Hash', 'HashRequest', 'HashResponse'),
  '/v3/maintenance/hashkv': r('HashKV', 'HashKVRequest', 'HashKVResponse'),
  '/v3/maintenance/transfer-leadership': r('MoveLeader', 'MoveLeaderRequest', 'MoveLeaderResponse'),
  '/v3/maintenance/downgrade': r('Downgrade', 'DowngradeRequest', 'DowngradeResponse'),
  '/v3/auth/enable': r('AuthEnable', 'AuthEnableRequest', 'AuthEnableResponse'),
  '/v3/auth/disable': r('AuthDisable', 'AuthDisableRequest', 'AuthDisableResponse'),
  '/v3/auth/status': r('AuthStatus', 'AuthStatusRequest', 'AuthStatusResponse'),
  '/v3/auth/authenticate': r('Authenticate', 'AuthenticateRequest', 'AuthenticateResponse'),
  '/v3/auth/user/add': r('UserAdd', 'AuthUserAddRequest', 'AuthUserAddResponse'),
  '/v3/auth/user/get': r('UserGet', 'AuthUserGetRequest', 'AuthUserGetResponse'),
  '/v3/auth/user/list': r('UserList', 'AuthUserListRequest', 'AuthUserListResponse'),
  '/v3/auth/user/delete': r('UserDelete', 'AuthUserDeleteRequest', 'AuthUserDeleteResponse'),
  '/v3/auth/user/changepw': r('UserChangePassword', 'AuthUserChangePasswordRequest', 'AuthUserChangePasswordResponse'),
  '/v3/auth/user/grant': r('UserGrantRole', 'AuthUserGrantRoleRequest', 'AuthUserGrantRoleResponse'),
  '/v3/auth/user/revoke': r('UserRevokeRole', 'AuthUserRevokeRoleRequest', 'AuthUserRevokeRoleResponse'),
  '/v3/auth/role/add': r('RoleAdd', 'AuthRoleAddRequest', 'AuthRoleAddResponse'),
  '/v3/auth/role/get': r('RoleGet', 'AuthRoleGetRequest', 'AuthRoleGetResponse'),
  '/v3/auth/role/list': r('RoleList', 'AuthRoleListRequest', 'AuthRoleListResponse'),
  '/v3/auth/role/delete': r('RoleDelete', 'AuthRoleDeleteRequest', 'AuthRoleDeleteResponse'),
  '/v3/auth/role/grant': r('RoleGrantPermission', 'AuthRoleGrantPermissionRequest', 'AuthRoleGrantPermissionResponse'),
  '/v3/auth/role/revoke': r('RoleRevokePermission', 'AuthRoleRevokePermissionRequest', 'AuthRoleRevokePermissionResponse'),
  '/v3/election/campaign': pkg('v3electionpb', 'Campaign', 'CampaignRequest', 'CampaignResponse'),
  '/v3/election/proclaim': pkg('v3electionpb', 'Proclaim', 'ProclaimRequest', 'ProclaimResponse'),
  '/v3/election/leader': pkg('v3electionpb', 'Leader', 'LeaderRequest', 'LeaderResponse'),
  '/v3/election/resign': pkg('v3electionpb', 'Resign', 'ResignRequest', 'ResignResponse'),
  '/v3/lock/lock': pkg('v3lockpb', 'Lock', 'LockRequest', 'LockResponse'),
  '/v3/lock/unlock': pkg('v3lockpb', 'Unlock', 'UnlockRequest', 'UnlockResponse'),
};

/** Streaming calls on the gateway: each answer is one JSON line {"result": <message>}, as grpc-gateway streams. */
export const GATEWAY_STREAMS = {
  '/v3/watch': { request: 'etcdserverpb.WatchRequest', response: 'etcdserverpb.WatchResponse' },
  '/v3/lease/keepalive': { request: 'etcdserverpb.LeaseKeepAliveRequest', response: 'etcdserverpb.LeaseKeepAliveResponse' },
  '/v3/maintenance/snapshot': { request: 'etcdserverpb.SnapshotRequest', response: 'etcdserverpb.SnapshotResponse' },
  '/v3/election/observe': { request: 'v3electionpb.LeaderRequest', response: 'v3electionpb.LeaderResponse' },
} as const satisfies Record<string, { request: MessageName; response: MessageName }>;

export type GatewayStreamPath = keyof typeof GATEWAY_STREAMS;

/** Is this path one of the gateway's streaming calls? */
export function isGatewayStream(path: string): path is GatewayStreamPath {
  return Object.hasOwn(GATEWAY_STREAMS, path);
}
