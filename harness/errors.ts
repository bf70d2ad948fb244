// One error class for the whole test harness (launchers, waits, ports, prerequisites), with a code to tell
// failures apart, instead of a class per launcher.
import { CodedError } from '../server/coded-error.js';

export type HarnessErrorCode =
  | 'TIMEOUT'
  | 'HTTP'
  | 'NO_MEMBER'
  | 'START_FAILED'
  | 'NO_LEADER'
  | 'BAD_ANSWER'
  | 'WAIT_TIMEOUT'
  | 'PROCESS_EXITED'
  | 'NO_FREE_PORT'
  | 'PROXY_LISTEN'
  | 'MISSING_PREREQUISITE'
  | 'COMMAND_FAILED'
  | 'BAD_INPUT'
  | 'NETWORK_RULE';

/** A harness failure: a cluster that does not reach a state, a process that dies while waited for, ... */
export class HarnessError extends CodedError<HarnessErrorCode> {}
