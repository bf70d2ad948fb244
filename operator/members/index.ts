// Talking to members (the seam: switch transports here only).
export { MemberClient, MemberError, type ClusterMemberInfo, type MemberClientOptions, type MemberStatusInfo, type VersionInfo } from './member-client.js';
export { withRetry } from './retry.js';
export { httpGet, type HttpAnswer } from './http.js';
