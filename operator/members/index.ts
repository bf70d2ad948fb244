// Talking to members (the seam: switch transports here only).
export { MemberClient, MemberError, type ClusterMemberInfo, type MemberClientOptions, type MemberStatusInfo, type VersionInfo } from './member-client.js';
export { withRetry } from './retry.js';
export { httpGet, type HttpAnswer, type MemberTls } from './http.js';
export { parseV2DataBytes, V2_SIZE_METRIC } from './v2-size.js';
