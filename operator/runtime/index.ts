// The runtime seam: one interface and its capabilities, implemented by runtime/local and runtime/kubernetes.
export { can, RuntimeError, StepPending, type Runtime, type RuntimeMember, type RuntimeWith } from './runtime.js';
export type { ScalingRuntime } from './scaling.js';
export type { HealingRuntime } from './healing.js';
