// The upgrade planner (pure) and its data types.
export { plan, restartReason, validateTarget, observedClusterVersion, catchUpSlack, CATCH_UP_SLACK, CATCH_UP_SECONDS, V2_SLOW_BYTES, V2_ACK_BYTES, V2_WAIT_MS } from './plan.js';
export { beginStep, recordSnapshot, noteMembersDone, settle, beginRollout, noteRollout, revisionKey } from './progress.js';
export { STEPS, STEP_KINDS, describeStep, isMutating, isScalingStep, isSettled, eventReason, statusReason, statusLine, actionLine, type StepRow, type StepTable, type ScalingStep } from './steps.js';
export { resumeScaling, scaleStep, ordinalOf, byOrdinal } from './scaling.js';
export type { RestartReason, RolloutProgress, TargetRevision, ClusterMember, ObservedCluster, ObservedMember, Step, StepKind, UpgradeProgress, WaitCode, BlockedCode } from './types.js';
export { parseVersion, minorOf, minorIndex, compareVersions, isSupportedVersion, SUPPORTED_MINORS, type Version } from '../api/versions.js';
export { upgradeStatus } from './status.js';
export { hexMemberId } from '../api/member-id.js';
