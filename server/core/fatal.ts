import { CodedError } from '../coded-error.js';

/** Thrown for conditions under which a member must not start (missing db, downgrade after completion...). */
export class FatalStartError extends CodedError<'FATAL_START'> {
  /**
   * @param logAs the reference's fatal line for this refusal (its message; the error goes in the `error` field),
   *   when it has one
   */
  constructor(message: string, readonly logAs?: string) {
    super('FATAL_START', message);
  }
}
