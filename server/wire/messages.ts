// Generated from server/wire/proto by server/wire/generate.ts: do not edit (see its header to regenerate).
// Each message twice: as the loader decodes it (Messages: proto field names, 64-bit integers as decimal strings,
// bytes as Buffer, enums as names, absent messages as null, only the oneof member that was sent plus a property
// naming it), and as the encoder takes it (Encodable: what a server answers and a client sends).
import type { Long } from 'protobufjs';

/** Every message by its fully qualified name. */
export interface Messages {
  'authpb.Permission': {
    permType: 'READ' | 'WRITE' | 'READWRITE';
    key: Buffer;
    range_end: Buffer;
  };
  'authpb.Role': {
    name: Buffer;
    keyPermission: Array<Messages['authpb.Permission']>;
  };
  'authpb.User': {
    name: Buffer;
    password: Buffer;
    roles: Array<string>;
    options: Messages['authpb.UserAddOptions'] | null;
  };
  'authpb.UserAddOptions': {
    no_password: boolean;
  };
  'etcdserverpb.AlarmMember': {
    memberID: string;
    alarm: 'NONE' | 'NOSPACE' | 'CORRUPT';
  };
  'etcdserverpb.AlarmRequest': {
    action: 'GET' | 'ACTIVATE' | 'DEACTIVATE';
    memberID: string;
    alarm: 'NONE' | 'NOSPACE' | 'CORRUPT';
  };
  'etcdserverpb.AlarmResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    alarms: Array<Messages['etcdserverpb.AlarmMember']>;
  };
  'etcdserverpb.AuthDisableRequest': Record<string, never>;
  'etcdserverpb.AuthDisableResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthEnableRequest': Record<string, never>;
  'etcdserverpb.AuthEnableResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleAddRequest': {
    name: string;
  };
  'etcdserverpb.AuthRoleAddResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleDeleteRequest': {
    role: string;
  };
  'etcdserverpb.AuthRoleDeleteResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleGetRequest': {
    role: string;
  };
  'etcdserverpb.AuthRoleGetResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    perm: Array<Messages['authpb.Permission']>;
  };
  'etcdserverpb.AuthRoleGrantPermissionRequest': {
    name: string;
    perm: Messages['authpb.Permission'] | null;
  };
  'etcdserverpb.AuthRoleGrantPermissionResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleListRequest': Record<string, never>;
  'etcdserverpb.AuthRoleListResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    roles: Array<string>;
  };
  'etcdserverpb.AuthRoleRevokePermissionRequest': {
    role: string;
    key: Buffer;
    range_end: Buffer;
  };
  'etcdserverpb.AuthRoleRevokePermissionResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthStatusRequest': Record<string, never>;
  'etcdserverpb.AuthStatusResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    enabled: boolean;
    authRevision: string;
  };
  'etcdserverpb.AuthUserAddRequest': {
    name: string;
    password: string;
    options: Messages['authpb.UserAddOptions'] | null;
    hashedPassword: string;
  };
  'etcdserverpb.AuthUserAddResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserChangePasswordRequest': {
    name: string;
    password: string;
    hashedPassword: string;
  };
  'etcdserverpb.AuthUserChangePasswordResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserDeleteRequest': {
    name: string;
  };
  'etcdserverpb.AuthUserDeleteResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserGetRequest': {
    name: string;
  };
  'etcdserverpb.AuthUserGetResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    roles: Array<string>;
  };
  'etcdserverpb.AuthUserGrantRoleRequest': {
    user: string;
    role: string;
  };
  'etcdserverpb.AuthUserGrantRoleResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserListRequest': Record<string, never>;
  'etcdserverpb.AuthUserListResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    users: Array<string>;
  };
  'etcdserverpb.AuthUserRevokeRoleRequest': {
    name: string;
    role: string;
  };
  'etcdserverpb.AuthUserRevokeRoleResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthenticateRequest': {
    name: string;
    password: string;
  };
  'etcdserverpb.AuthenticateResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    token: string;
  };
  'etcdserverpb.CompactionRequest': {
    revision: string;
    physical: boolean;
  };
  'etcdserverpb.CompactionResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.Compare': {
    result: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
    target: 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
    key: Buffer;
    version?: string;
    create_revision?: string;
    mod_revision?: string;
    value?: Buffer;
    lease?: string;
    range_end: Buffer;
    target_union?: 'version' | 'create_revision' | 'mod_revision' | 'value' | 'lease';
  };
  'etcdserverpb.DefragmentRequest': Record<string, never>;
  'etcdserverpb.DefragmentResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.DeleteRangeRequest': {
    key: Buffer;
    range_end: Buffer;
    prev_kv: boolean;
  };
  'etcdserverpb.DeleteRangeResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    deleted: string;
    prev_kvs: Array<Messages['mvccpb.KeyValue']>;
  };
  'etcdserverpb.DowngradeInfo': {
    enabled: boolean;
    targetVersion: string;
  };
  'etcdserverpb.DowngradeRequest': {
    action: 'VALIDATE' | 'ENABLE' | 'CANCEL';
    version: string;
  };
  'etcdserverpb.DowngradeResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    version: string;
  };
  'etcdserverpb.HashKVRequest': {
    revision: string;
  };
  'etcdserverpb.HashKVResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    hash: number;
    compact_revision: string;
    hash_revision: string;
  };
  'etcdserverpb.HashRequest': Record<string, never>;
  'etcdserverpb.HashResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    hash: number;
  };
  'etcdserverpb.LeaseCheckpoint': {
    ID: string;
    remaining_TTL: string;
  };
  'etcdserverpb.LeaseCheckpointRequest': {
    checkpoints: Array<Messages['etcdserverpb.LeaseCheckpoint']>;
  };
  'etcdserverpb.LeaseCheckpointResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.LeaseGrantRequest': {
    TTL: string;
    ID: string;
  };
  'etcdserverpb.LeaseGrantResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    ID: string;
    TTL: string;
    error: string;
  };
  'etcdserverpb.LeaseKeepAliveRequest': {
    ID: string;
  };
  'etcdserverpb.LeaseKeepAliveResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    ID: string;
    TTL: string;
  };
  'etcdserverpb.LeaseLeasesRequest': Record<string, never>;
  'etcdserverpb.LeaseLeasesResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    leases: Array<Messages['etcdserverpb.LeaseStatus']>;
  };
  'etcdserverpb.LeaseRevokeRequest': {
    ID: string;
  };
  'etcdserverpb.LeaseRevokeResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.LeaseStatus': {
    ID: string;
  };
  'etcdserverpb.LeaseTimeToLiveRequest': {
    ID: string;
    keys: boolean;
  };
  'etcdserverpb.LeaseTimeToLiveResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    ID: string;
    TTL: string;
    grantedTTL: string;
    keys: Array<Buffer>;
  };
  'etcdserverpb.Member': {
    ID: string;
    name: string;
    peerURLs: Array<string>;
    clientURLs: Array<string>;
    isLearner: boolean;
  };
  'etcdserverpb.MemberAddRequest': {
    peerURLs: Array<string>;
    isLearner: boolean;
  };
  'etcdserverpb.MemberAddResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    member: Messages['etcdserverpb.Member'] | null;
    members: Array<Messages['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberListRequest': {
    linearizable: boolean;
  };
  'etcdserverpb.MemberListResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    members: Array<Messages['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberPromoteRequest': {
    ID: string;
  };
  'etcdserverpb.MemberPromoteResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    members: Array<Messages['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberRemoveRequest': {
    ID: string;
  };
  'etcdserverpb.MemberRemoveResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    members: Array<Messages['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberUpdateRequest': {
    ID: string;
    peerURLs: Array<string>;
  };
  'etcdserverpb.MemberUpdateResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    members: Array<Messages['etcdserverpb.Member']>;
  };
  'etcdserverpb.MoveLeaderRequest': {
    targetID: string;
  };
  'etcdserverpb.MoveLeaderResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.PutRequest': {
    key: Buffer;
    value: Buffer;
    lease: string;
    prev_kv: boolean;
    ignore_value: boolean;
    ignore_lease: boolean;
  };
  'etcdserverpb.PutResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    prev_kv: Messages['mvccpb.KeyValue'] | null;
  };
  'etcdserverpb.RangeRequest': {
    key: Buffer;
    range_end: Buffer;
    limit: string;
    revision: string;
    sort_order: 'NONE' | 'ASCEND' | 'DESCEND';
    sort_target: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';
    serializable: boolean;
    keys_only: boolean;
    count_only: boolean;
    min_mod_revision: string;
    max_mod_revision: string;
    min_create_revision: string;
    max_create_revision: string;
  };
  'etcdserverpb.RangeResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    kvs: Array<Messages['mvccpb.KeyValue']>;
    more: boolean;
    count: string;
  };
  'etcdserverpb.RequestOp': {
    request_range?: Messages['etcdserverpb.RangeRequest'];
    request_put?: Messages['etcdserverpb.PutRequest'];
    request_delete_range?: Messages['etcdserverpb.DeleteRangeRequest'];
    request_txn?: Messages['etcdserverpb.TxnRequest'];
    request?: 'request_range' | 'request_put' | 'request_delete_range' | 'request_txn';
  };
  'etcdserverpb.ResponseHeader': {
    cluster_id: string;
    member_id: string;
    revision: string;
    raft_term: string;
  };
  'etcdserverpb.ResponseOp': {
    response_range?: Messages['etcdserverpb.RangeResponse'];
    response_put?: Messages['etcdserverpb.PutResponse'];
    response_delete_range?: Messages['etcdserverpb.DeleteRangeResponse'];
    response_txn?: Messages['etcdserverpb.TxnResponse'];
    response?: 'response_range' | 'response_put' | 'response_delete_range' | 'response_txn';
  };
  'etcdserverpb.SnapshotRequest': Record<string, never>;
  'etcdserverpb.SnapshotResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    remaining_bytes: string;
    blob: Buffer;
  };
  'etcdserverpb.StatusRequest': Record<string, never>;
  'etcdserverpb.StatusResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    version: string;
    dbSize: string;
    leader: string;
    raftIndex: string;
    raftTerm: string;
    raftAppliedIndex: string;
    errors: Array<string>;
    dbSizeInUse: string;
    isLearner: boolean;
    storageVersion: string;
    dbSizeQuota: string;
    downgradeInfo: Messages['etcdserverpb.DowngradeInfo'] | null;
  };
  'etcdserverpb.TxnRequest': {
    compare: Array<Messages['etcdserverpb.Compare']>;
    success: Array<Messages['etcdserverpb.RequestOp']>;
    failure: Array<Messages['etcdserverpb.RequestOp']>;
  };
  'etcdserverpb.TxnResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    succeeded: boolean;
    responses: Array<Messages['etcdserverpb.ResponseOp']>;
  };
  'etcdserverpb.WatchCancelRequest': {
    watch_id: string;
  };
  'etcdserverpb.WatchCreateRequest': {
    key: Buffer;
    range_end: Buffer;
    start_revision: string;
    progress_notify: boolean;
    filters: Array<'NOPUT' | 'NODELETE'>;
    prev_kv: boolean;
    watch_id: string;
    fragment: boolean;
  };
  'etcdserverpb.WatchProgressRequest': Record<string, never>;
  'etcdserverpb.WatchRequest': {
    create_request?: Messages['etcdserverpb.WatchCreateRequest'];
    cancel_request?: Messages['etcdserverpb.WatchCancelRequest'];
    progress_request?: Messages['etcdserverpb.WatchProgressRequest'];
    request_union?: 'create_request' | 'cancel_request' | 'progress_request';
  };
  'etcdserverpb.WatchResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    watch_id: string;
    created: boolean;
    canceled: boolean;
    compact_revision: string;
    cancel_reason: string;
    fragment: boolean;
    events: Array<Messages['mvccpb.Event']>;
  };
  'grpc.health.v1.HealthCheckRequest': {
    service: string;
  };
  'grpc.health.v1.HealthCheckResponse': {
    status: 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';
  };
  'mvccpb.Event': {
    type: 'PUT' | 'DELETE';
    kv: Messages['mvccpb.KeyValue'] | null;
    prev_kv: Messages['mvccpb.KeyValue'] | null;
  };
  'mvccpb.KeyValue': {
    key: Buffer;
    create_revision: string;
    mod_revision: string;
    version: string;
    value: Buffer;
    lease: string;
  };
  'v3electionpb.CampaignRequest': {
    name: Buffer;
    lease: string;
    value: Buffer;
  };
  'v3electionpb.CampaignResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    leader: Messages['v3electionpb.LeaderKey'] | null;
  };
  'v3electionpb.LeaderKey': {
    name: Buffer;
    key: Buffer;
    rev: string;
    lease: string;
  };
  'v3electionpb.LeaderRequest': {
    name: Buffer;
  };
  'v3electionpb.LeaderResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    kv: Messages['mvccpb.KeyValue'] | null;
  };
  'v3electionpb.ProclaimRequest': {
    leader: Messages['v3electionpb.LeaderKey'] | null;
    value: Buffer;
  };
  'v3electionpb.ProclaimResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'v3electionpb.ResignRequest': {
    leader: Messages['v3electionpb.LeaderKey'] | null;
  };
  'v3electionpb.ResignResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
  'v3lockpb.LockRequest': {
    name: Buffer;
    lease: string;
  };
  'v3lockpb.LockResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
    key: Buffer;
  };
  'v3lockpb.UnlockRequest': {
    key: Buffer;
  };
  'v3lockpb.UnlockResponse': {
    header: Messages['etcdserverpb.ResponseHeader'] | null;
  };
}

export type MessageName = keyof Messages;

/** A 64-bit integer as the encoder takes it: a number (exact up to 2^53), a decimal string or a protobufjs Long. */
export type Int64 = number | string | Long;

/**
 * Every message as the encoder takes it: every field optional (absent is the zero value), 64-bit integers as
 * Int64, bytes as any Uint8Array, enums by name, a oneof by the one member that is set.
 */
export interface Encodable {
  'authpb.Permission': {
    permType?: 'READ' | 'WRITE' | 'READWRITE';
    key?: Uint8Array;
    range_end?: Uint8Array;
  };
  'authpb.Role': {
    name?: Uint8Array;
    keyPermission?: Array<Encodable['authpb.Permission']>;
  };
  'authpb.User': {
    name?: Uint8Array;
    password?: Uint8Array;
    roles?: Array<string>;
    options?: Encodable['authpb.UserAddOptions'] | null;
  };
  'authpb.UserAddOptions': {
    no_password?: boolean;
  };
  'etcdserverpb.AlarmMember': {
    memberID?: Int64;
    alarm?: 'NONE' | 'NOSPACE' | 'CORRUPT';
  };
  'etcdserverpb.AlarmRequest': {
    action?: 'GET' | 'ACTIVATE' | 'DEACTIVATE';
    memberID?: Int64;
    alarm?: 'NONE' | 'NOSPACE' | 'CORRUPT';
  };
  'etcdserverpb.AlarmResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    alarms?: Array<Encodable['etcdserverpb.AlarmMember']>;
  };
  'etcdserverpb.AuthDisableRequest': Record<string, never>;
  'etcdserverpb.AuthDisableResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthEnableRequest': Record<string, never>;
  'etcdserverpb.AuthEnableResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleAddRequest': {
    name?: string;
  };
  'etcdserverpb.AuthRoleAddResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleDeleteRequest': {
    role?: string;
  };
  'etcdserverpb.AuthRoleDeleteResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleGetRequest': {
    role?: string;
  };
  'etcdserverpb.AuthRoleGetResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    perm?: Array<Encodable['authpb.Permission']>;
  };
  'etcdserverpb.AuthRoleGrantPermissionRequest': {
    name?: string;
    perm?: Encodable['authpb.Permission'] | null;
  };
  'etcdserverpb.AuthRoleGrantPermissionResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthRoleListRequest': Record<string, never>;
  'etcdserverpb.AuthRoleListResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    roles?: Array<string>;
  };
  'etcdserverpb.AuthRoleRevokePermissionRequest': {
    role?: string;
    key?: Uint8Array;
    range_end?: Uint8Array;
  };
  'etcdserverpb.AuthRoleRevokePermissionResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthStatusRequest': Record<string, never>;
  'etcdserverpb.AuthStatusResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    enabled?: boolean;
    authRevision?: Int64;
  };
  'etcdserverpb.AuthUserAddRequest': {
    name?: string;
    password?: string;
    options?: Encodable['authpb.UserAddOptions'] | null;
    hashedPassword?: string;
  };
  'etcdserverpb.AuthUserAddResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserChangePasswordRequest': {
    name?: string;
    password?: string;
    hashedPassword?: string;
  };
  'etcdserverpb.AuthUserChangePasswordResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserDeleteRequest': {
    name?: string;
  };
  'etcdserverpb.AuthUserDeleteResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserGetRequest': {
    name?: string;
  };
  'etcdserverpb.AuthUserGetResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    roles?: Array<string>;
  };
  'etcdserverpb.AuthUserGrantRoleRequest': {
    user?: string;
    role?: string;
  };
  'etcdserverpb.AuthUserGrantRoleResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthUserListRequest': Record<string, never>;
  'etcdserverpb.AuthUserListResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    users?: Array<string>;
  };
  'etcdserverpb.AuthUserRevokeRoleRequest': {
    name?: string;
    role?: string;
  };
  'etcdserverpb.AuthUserRevokeRoleResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.AuthenticateRequest': {
    name?: string;
    password?: string;
  };
  'etcdserverpb.AuthenticateResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    token?: string;
  };
  'etcdserverpb.CompactionRequest': {
    revision?: Int64;
    physical?: boolean;
  };
  'etcdserverpb.CompactionResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.Compare': {
    result?: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
    target?: 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
    key?: Uint8Array;
    version?: Int64;
    create_revision?: Int64;
    mod_revision?: Int64;
    value?: Uint8Array;
    lease?: Int64;
    range_end?: Uint8Array;
  };
  'etcdserverpb.DefragmentRequest': Record<string, never>;
  'etcdserverpb.DefragmentResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.DeleteRangeRequest': {
    key?: Uint8Array;
    range_end?: Uint8Array;
    prev_kv?: boolean;
  };
  'etcdserverpb.DeleteRangeResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    deleted?: Int64;
    prev_kvs?: Array<Encodable['mvccpb.KeyValue']>;
  };
  'etcdserverpb.DowngradeInfo': {
    enabled?: boolean;
    targetVersion?: string;
  };
  'etcdserverpb.DowngradeRequest': {
    action?: 'VALIDATE' | 'ENABLE' | 'CANCEL';
    version?: string;
  };
  'etcdserverpb.DowngradeResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    version?: string;
  };
  'etcdserverpb.HashKVRequest': {
    revision?: Int64;
  };
  'etcdserverpb.HashKVResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    hash?: number;
    compact_revision?: Int64;
    hash_revision?: Int64;
  };
  'etcdserverpb.HashRequest': Record<string, never>;
  'etcdserverpb.HashResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    hash?: number;
  };
  'etcdserverpb.LeaseCheckpoint': {
    ID?: Int64;
    remaining_TTL?: Int64;
  };
  'etcdserverpb.LeaseCheckpointRequest': {
    checkpoints?: Array<Encodable['etcdserverpb.LeaseCheckpoint']>;
  };
  'etcdserverpb.LeaseCheckpointResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.LeaseGrantRequest': {
    TTL?: Int64;
    ID?: Int64;
  };
  'etcdserverpb.LeaseGrantResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    ID?: Int64;
    TTL?: Int64;
    error?: string;
  };
  'etcdserverpb.LeaseKeepAliveRequest': {
    ID?: Int64;
  };
  'etcdserverpb.LeaseKeepAliveResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    ID?: Int64;
    TTL?: Int64;
  };
  'etcdserverpb.LeaseLeasesRequest': Record<string, never>;
  'etcdserverpb.LeaseLeasesResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    leases?: Array<Encodable['etcdserverpb.LeaseStatus']>;
  };
  'etcdserverpb.LeaseRevokeRequest': {
    ID?: Int64;
  };
  'etcdserverpb.LeaseRevokeResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.LeaseStatus': {
    ID?: Int64;
  };
  'etcdserverpb.LeaseTimeToLiveRequest': {
    ID?: Int64;
    keys?: boolean;
  };
  'etcdserverpb.LeaseTimeToLiveResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    ID?: Int64;
    TTL?: Int64;
    grantedTTL?: Int64;
    keys?: Array<Uint8Array>;
  };
  'etcdserverpb.Member': {
    ID?: Int64;
    name?: string;
    peerURLs?: Array<string>;
    clientURLs?: Array<string>;
    isLearner?: boolean;
  };
  'etcdserverpb.MemberAddRequest': {
    peerURLs?: Array<string>;
    isLearner?: boolean;
  };
  'etcdserverpb.MemberAddResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    member?: Encodable['etcdserverpb.Member'] | null;
    members?: Array<Encodable['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberListRequest': {
    linearizable?: boolean;
  };
  'etcdserverpb.MemberListResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    members?: Array<Encodable['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberPromoteRequest': {
    ID?: Int64;
  };
  'etcdserverpb.MemberPromoteResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    members?: Array<Encodable['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberRemoveRequest': {
    ID?: Int64;
  };
  'etcdserverpb.MemberRemoveResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    members?: Array<Encodable['etcdserverpb.Member']>;
  };
  'etcdserverpb.MemberUpdateRequest': {
    ID?: Int64;
    peerURLs?: Array<string>;
  };
  'etcdserverpb.MemberUpdateResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    members?: Array<Encodable['etcdserverpb.Member']>;
  };
  'etcdserverpb.MoveLeaderRequest': {
    targetID?: Int64;
  };
  'etcdserverpb.MoveLeaderResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'etcdserverpb.PutRequest': {
    key?: Uint8Array;
    value?: Uint8Array;
    lease?: Int64;
    prev_kv?: boolean;
    ignore_value?: boolean;
    ignore_lease?: boolean;
  };
  'etcdserverpb.PutResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    prev_kv?: Encodable['mvccpb.KeyValue'] | null;
  };
  'etcdserverpb.RangeRequest': {
    key?: Uint8Array;
    range_end?: Uint8Array;
    limit?: Int64;
    revision?: Int64;
    sort_order?: 'NONE' | 'ASCEND' | 'DESCEND';
    sort_target?: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';
    serializable?: boolean;
    keys_only?: boolean;
    count_only?: boolean;
    min_mod_revision?: Int64;
    max_mod_revision?: Int64;
    min_create_revision?: Int64;
    max_create_revision?: Int64;
  };
  'etcdserverpb.RangeResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    kvs?: Array<Encodable['mvccpb.KeyValue']>;
    more?: boolean;
    count?: Int64;
  };
  'etcdserverpb.RequestOp': {
    request_range?: Encodable['etcdserverpb.RangeRequest'] | null;
    request_put?: Encodable['etcdserverpb.PutRequest'] | null;
    request_delete_range?: Encodable['etcdserverpb.DeleteRangeRequest'] | null;
    request_txn?: Encodable['etcdserverpb.TxnRequest'] | null;
  };
  'etcdserverpb.ResponseHeader': {
    cluster_id?: Int64;
    member_id?: Int64;
    revision?: Int64;
    raft_term?: Int64;
  };
  'etcdserverpb.ResponseOp': {
    response_range?: Encodable['etcdserverpb.RangeResponse'] | null;
    response_put?: Encodable['etcdserverpb.PutResponse'] | null;
    response_delete_range?: Encodable['etcdserverpb.DeleteRangeResponse'] | null;
    response_txn?: Encodable['etcdserverpb.TxnResponse'] | null;
  };
  'etcdserverpb.SnapshotRequest': Record<string, never>;
  'etcdserverpb.SnapshotResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    remaining_bytes?: Int64;
    blob?: Uint8Array;
  };
  'etcdserverpb.StatusRequest': Record<string, never>;
  'etcdserverpb.StatusResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    version?: string;
    dbSize?: Int64;
    leader?: Int64;
    raftIndex?: Int64;
    raftTerm?: Int64;
    raftAppliedIndex?: Int64;
    errors?: Array<string>;
    dbSizeInUse?: Int64;
    isLearner?: boolean;
    storageVersion?: string;
    dbSizeQuota?: Int64;
    downgradeInfo?: Encodable['etcdserverpb.DowngradeInfo'] | null;
  };
  'etcdserverpb.TxnRequest': {
    compare?: Array<Encodable['etcdserverpb.Compare']>;
    success?: Array<Encodable['etcdserverpb.RequestOp']>;
    failure?: Array<Encodable['etcdserverpb.RequestOp']>;
  };
  'etcdserverpb.TxnResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    succeeded?: boolean;
    responses?: Array<Encodable['etcdserverpb.ResponseOp']>;
  };
  'etcdserverpb.WatchCancelRequest': {
    watch_id?: Int64;
  };
  'etcdserverpb.WatchCreateRequest': {
    key?: Uint8Array;
    range_end?: Uint8Array;
    start_revision?: Int64;
    progress_notify?: boolean;
    filters?: Array<'NOPUT' | 'NODELETE'>;
    prev_kv?: boolean;
    watch_id?: Int64;
    fragment?: boolean;
  };
  'etcdserverpb.WatchProgressRequest': Record<string, never>;
  'etcdserverpb.WatchRequest': {
    create_request?: Encodable['etcdserverpb.WatchCreateRequest'] | null;
    cancel_request?: Encodable['etcdserverpb.WatchCancelRequest'] | null;
    progress_request?: Encodable['etcdserverpb.WatchProgressRequest'] | null;
  };
  'etcdserverpb.WatchResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    watch_id?: Int64;
    created?: boolean;
    canceled?: boolean;
    compact_revision?: Int64;
    cancel_reason?: string;
    fragment?: boolean;
    events?: Array<Encodable['mvccpb.Event']>;
  };
  'grpc.health.v1.HealthCheckRequest': {
    service?: string;
  };
  'grpc.health.v1.HealthCheckResponse': {
    status?: 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';
  };
  'mvccpb.Event': {
    type?: 'PUT' | 'DELETE';
    kv?: Encodable['mvccpb.KeyValue'] | null;
    prev_kv?: Encodable['mvccpb.KeyValue'] | null;
  };
  'mvccpb.KeyValue': {
    key?: Uint8Array;
    create_revision?: Int64;
    mod_revision?: Int64;
    version?: Int64;
    value?: Uint8Array;
    lease?: Int64;
  };
  'v3electionpb.CampaignRequest': {
    name?: Uint8Array;
    lease?: Int64;
    value?: Uint8Array;
  };
  'v3electionpb.CampaignResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    leader?: Encodable['v3electionpb.LeaderKey'] | null;
  };
  'v3electionpb.LeaderKey': {
    name?: Uint8Array;
    key?: Uint8Array;
    rev?: Int64;
    lease?: Int64;
  };
  'v3electionpb.LeaderRequest': {
    name?: Uint8Array;
  };
  'v3electionpb.LeaderResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    kv?: Encodable['mvccpb.KeyValue'] | null;
  };
  'v3electionpb.ProclaimRequest': {
    leader?: Encodable['v3electionpb.LeaderKey'] | null;
    value?: Uint8Array;
  };
  'v3electionpb.ProclaimResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'v3electionpb.ResignRequest': {
    leader?: Encodable['v3electionpb.LeaderKey'] | null;
  };
  'v3electionpb.ResignResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
  'v3lockpb.LockRequest': {
    name?: Uint8Array;
    lease?: Int64;
  };
  'v3lockpb.LockResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
    key?: Uint8Array;
  };
  'v3lockpb.UnlockRequest': {
    key?: Uint8Array;
  };
  'v3lockpb.UnlockResponse': {
    header?: Encodable['etcdserverpb.ResponseHeader'] | null;
  };
}

/** Every service by its fully qualified name: its methods, their messages and which side streams. */
export const SERVICES = {
  'etcdserverpb.Auth': {
    AuthEnable: { request: 'etcdserverpb.AuthEnableRequest', response: 'etcdserverpb.AuthEnableResponse', requestStream: false, responseStream: false },
    AuthDisable: { request: 'etcdserverpb.AuthDisableRequest', response: 'etcdserverpb.AuthDisableResponse', requestStream: false, responseStream: false },
    AuthStatus: { request: 'etcdserverpb.AuthStatusRequest', response: 'etcdserverpb.AuthStatusResponse', requestStream: false, responseStream: false },
    Authenticate: { request: 'etcdserverpb.AuthenticateRequest', response: 'etcdserverpb.AuthenticateResponse', requestStream: false, responseStream: false },
    UserAdd: { request: 'etcdserverpb.AuthUserAddRequest', response: 'etcdserverpb.AuthUserAddResponse', requestStream: false, responseStream: false },
    UserGet: { request: 'etcdserverpb.AuthUserGetRequest', response: 'etcdserverpb.AuthUserGetResponse', requestStream: false, responseStream: false },
    UserList: { request: 'etcdserverpb.AuthUserListRequest', response: 'etcdserverpb.AuthUserListResponse', requestStream: false, responseStream: false },
    UserDelete: { request: 'etcdserverpb.AuthUserDeleteRequest', response: 'etcdserverpb.AuthUserDeleteResponse', requestStream: false, responseStream: false },
    UserChangePassword: { request: 'etcdserverpb.AuthUserChangePasswordRequest', response: 'etcdserverpb.AuthUserChangePasswordResponse', requestStream: false, responseStream: false },
    UserGrantRole: { request: 'etcdserverpb.AuthUserGrantRoleRequest', response: 'etcdserverpb.AuthUserGrantRoleResponse', requestStream: false, responseStream: false },
    UserRevokeRole: { request: 'etcdserverpb.AuthUserRevokeRoleRequest', response: 'etcdserverpb.AuthUserRevokeRoleResponse', requestStream: false, responseStream: false },
    RoleAdd: { request: 'etcdserverpb.AuthRoleAddRequest', response: 'etcdserverpb.AuthRoleAddResponse', requestStream: false, responseStream: false },
    RoleGet: { request: 'etcdserverpb.AuthRoleGetRequest', response: 'etcdserverpb.AuthRoleGetResponse', requestStream: false, responseStream: false },
    RoleList: { request: 'etcdserverpb.AuthRoleListRequest', response: 'etcdserverpb.AuthRoleListResponse', requestStream: false, responseStream: false },
    RoleDelete: { request: 'etcdserverpb.AuthRoleDeleteRequest', response: 'etcdserverpb.AuthRoleDeleteResponse', requestStream: false, responseStream: false },
    RoleGrantPermission: { request: 'etcdserverpb.AuthRoleGrantPermissionRequest', response: 'etcdserverpb.AuthRoleGrantPermissionResponse', requestStream: false, responseStream: false },
    RoleRevokePermission: { request: 'etcdserverpb.AuthRoleRevokePermissionRequest', response: 'etcdserverpb.AuthRoleRevokePermissionResponse', requestStream: false, responseStream: false },
  },
  'etcdserverpb.Cluster': {
    MemberAdd: { request: 'etcdserverpb.MemberAddRequest', response: 'etcdserverpb.MemberAddResponse', requestStream: false, responseStream: false },
    MemberRemove: { request: 'etcdserverpb.MemberRemoveRequest', response: 'etcdserverpb.MemberRemoveResponse', requestStream: false, responseStream: false },
    MemberUpdate: { request: 'etcdserverpb.MemberUpdateRequest', response: 'etcdserverpb.MemberUpdateResponse', requestStream: false, responseStream: false },
    MemberList: { request: 'etcdserverpb.MemberListRequest', response: 'etcdserverpb.MemberListResponse', requestStream: false, responseStream: false },
    MemberPromote: { request: 'etcdserverpb.MemberPromoteRequest', response: 'etcdserverpb.MemberPromoteResponse', requestStream: false, responseStream: false },
  },
  'etcdserverpb.KV': {
    Range: { request: 'etcdserverpb.RangeRequest', response: 'etcdserverpb.RangeResponse', requestStream: false, responseStream: false },
    Put: { request: 'etcdserverpb.PutRequest', response: 'etcdserverpb.PutResponse', requestStream: false, responseStream: false },
    DeleteRange: { request: 'etcdserverpb.DeleteRangeRequest', response: 'etcdserverpb.DeleteRangeResponse', requestStream: false, responseStream: false },
    Txn: { request: 'etcdserverpb.TxnRequest', response: 'etcdserverpb.TxnResponse', requestStream: false, responseStream: false },
    Compact: { request: 'etcdserverpb.CompactionRequest', response: 'etcdserverpb.CompactionResponse', requestStream: false, responseStream: false },
  },
  'etcdserverpb.Lease': {
    LeaseGrant: { request: 'etcdserverpb.LeaseGrantRequest', response: 'etcdserverpb.LeaseGrantResponse', requestStream: false, responseStream: false },
    LeaseRevoke: { request: 'etcdserverpb.LeaseRevokeRequest', response: 'etcdserverpb.LeaseRevokeResponse', requestStream: false, responseStream: false },
    LeaseKeepAlive: { request: 'etcdserverpb.LeaseKeepAliveRequest', response: 'etcdserverpb.LeaseKeepAliveResponse', requestStream: true, responseStream: true },
    LeaseTimeToLive: { request: 'etcdserverpb.LeaseTimeToLiveRequest', response: 'etcdserverpb.LeaseTimeToLiveResponse', requestStream: false, responseStream: false },
    LeaseLeases: { request: 'etcdserverpb.LeaseLeasesRequest', response: 'etcdserverpb.LeaseLeasesResponse', requestStream: false, responseStream: false },
  },
  'etcdserverpb.Maintenance': {
    Alarm: { request: 'etcdserverpb.AlarmRequest', response: 'etcdserverpb.AlarmResponse', requestStream: false, responseStream: false },
    Status: { request: 'etcdserverpb.StatusRequest', response: 'etcdserverpb.StatusResponse', requestStream: false, responseStream: false },
    Defragment: { request: 'etcdserverpb.DefragmentRequest', response: 'etcdserverpb.DefragmentResponse', requestStream: false, responseStream: false },
    Hash: { request: 'etcdserverpb.HashRequest', response: 'etcdserverpb.HashResponse', requestStream: false, responseStream: false },
    HashKV: { request: 'etcdserverpb.HashKVRequest', response: 'etcdserverpb.HashKVResponse', requestStream: false, responseStream: false },
    Snapshot: { request: 'etcdserverpb.SnapshotRequest', response: 'etcdserverpb.SnapshotResponse', requestStream: false, responseStream: true },
    MoveLeader: { request: 'etcdserverpb.MoveLeaderRequest', response: 'etcdserverpb.MoveLeaderResponse', requestStream: false, responseStream: false },
    Downgrade: { request: 'etcdserverpb.DowngradeRequest', response: 'etcdserverpb.DowngradeResponse', requestStream: false, responseStream: false },
  },
  'etcdserverpb.Watch': {
    Watch: { request: 'etcdserverpb.WatchRequest', response: 'etcdserverpb.WatchResponse', requestStream: true, responseStream: true },
  },
  'grpc.health.v1.Health': {
    Check: { request: 'grpc.health.v1.HealthCheckRequest', response: 'grpc.health.v1.HealthCheckResponse', requestStream: false, responseStream: false },
    Watch: { request: 'grpc.health.v1.HealthCheckRequest', response: 'grpc.health.v1.HealthCheckResponse', requestStream: false, responseStream: true },
  },
  'v3electionpb.Election': {
    Campaign: { request: 'v3electionpb.CampaignRequest', response: 'v3electionpb.CampaignResponse', requestStream: false, responseStream: false },
    Proclaim: { request: 'v3electionpb.ProclaimRequest', response: 'v3electionpb.ProclaimResponse', requestStream: false, responseStream: false },
    Leader: { request: 'v3electionpb.LeaderRequest', response: 'v3electionpb.LeaderResponse', requestStream: false, responseStream: false },
    Observe: { request: 'v3electionpb.LeaderRequest', response: 'v3electionpb.LeaderResponse', requestStream: false, responseStream: true },
    Resign: { request: 'v3electionpb.ResignRequest', response: 'v3electionpb.ResignResponse', requestStream: false, responseStream: false },
  },
  'v3lockpb.Lock': {
    Lock: { request: 'v3lockpb.LockRequest', response: 'v3lockpb.LockResponse', requestStream: false, responseStream: false },
    Unlock: { request: 'v3lockpb.UnlockRequest', response: 'v3lockpb.UnlockResponse', requestStream: false, responseStream: false },
  },
} as const satisfies Record<string, Record<string, MethodInfo>>;

/** One method of a service. */
export interface MethodInfo {
  readonly request: MessageName;
  readonly response: MessageName;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

export type ServiceName = keyof typeof SERVICES;

/** The unary methods of a service (neither side streams). */
export type UnaryMethod<S extends ServiceName> = {
  [M in keyof (typeof SERVICES)[S]]: (typeof SERVICES)[S][M] extends { requestStream: false; responseStream: false } ? M : never;
}[keyof (typeof SERVICES)[S]] & string;

/** The decoded request and response of a method. */
export type RequestOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { request: infer R extends MessageName } ? Messages[R] : never;
export type ResponseOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { response: infer R extends MessageName } ? Messages[R] : never;

/** The request and response of a method as the encoder takes them (what a client sends, what a server answers). */
export type EncodableRequestOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { request: infer R extends MessageName } ? Encodable[R] : never;
export type EncodableResponseOf<S extends ServiceName, M extends keyof (typeof SERVICES)[S]> = (typeof SERVICES)[S][M] extends { response: infer R extends MessageName } ? Encodable[R] : never;
