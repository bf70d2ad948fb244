import { CodedError } from '../coded-error.js';

/** Thrown for conditions under which a member must not start (missing db, downgrade after completion...). */
export class FatalStartError extends CodedError<'FATAL_START'> {
  constructor(message: string) {
    super('FATAL_START', message);
  }
}
