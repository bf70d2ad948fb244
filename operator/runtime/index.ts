// The runtime seam: one interface, implemented by runtime/local (and later runtime/kubernetes).
export { RuntimeError, StepPending, type Runtime, type RuntimeMember } from './runtime.js';
export { canScale, type ScalingRuntime } from './scaling.js';
export { canHeal, type HealingRuntime } from './healing.js';
