// The orchestrator loop (observe -> plan -> record -> act) shared by every front end.
export { reconcile, type ReconcileOptions, type ReconcileResult, type StepEvent } from './reconcile.js';
export { observe, type Observation } from './observe.js';
