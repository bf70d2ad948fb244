// The one error type of configuration parsing: the CLI prints its message and exits with status 2.
import { CodedError } from '../coded-error.js';

export class ConfigError extends CodedError<'CONFIG'> {
  constructor(
    message: string,
    /** The flag or config-file key the error is about, when there is one. */
    readonly flag?: string,
  ) {
    super('CONFIG', message);
  }
}
