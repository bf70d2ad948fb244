// How svcctl fails: an error with the reference client's exit code; main prints "Error: <message>".
import { CodedError } from '../../coded-error.js';

/** The reference client's exit codes. */
export const Exit = {
  Success: 0,
  Error: 1,
  BadConnection: 2,
  InvalidInput: 3,
  BadFeature: 4,
  Interrupted: 5,
  IO: 6,
  BadArgs: 128,
} as const;

/** A failure of a command, printed as "Error: <message>" and exiting with `exitCode`. */
export class CliError extends CodedError<'SVCCTL_ERROR'> {
  constructor(
    message: string,
    readonly exitCode: number = Exit.Error,
    /** Printed instead of "Error: <message>\n" when set (e.g. the unknown-command text). */
    readonly raw?: string,
  ) {
    super('SVCCTL_ERROR', message);
  }
}
