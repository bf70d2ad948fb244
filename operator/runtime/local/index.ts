// The local runtime (members as child processes).
export { LocalRuntime, DEFAULT_SVC_ENTRY, restoreProblem, type LocalRuntimeOptions } from './local-runtime.js';
export { readState, writeState, stateFile, type LocalState, type LocalMemberState } from './state.js';
export { takeLock, readLock, holderAlive, lockFile, RUN_COMMAND, StateDirLock, type LockHolder, type SettledRecord } from './lock.js';
