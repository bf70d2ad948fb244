// The orchestrator loop (observe -> plan -> record -> act) shared by every front end.
export { reconcile, type ReconcileOptions, type ReconcileResult, type StepEvent } from './local-loop.js';
export { observe, type Observation } from './observe.js';
export { runPass, newMemory, envCrash, LEADER_MOVE_WAIT_MS, type EngineMemory, type PassHooks, type PassResult, type CrashPoint } from './engine.js';
export type { MemberApi } from './member-api.js';
