// The one error type of configuration parsing: the CLI prints its message and exits with status 2.

export class ConfigError extends Error {
  readonly code = 'CONFIG';
  /** The flag or config-file key the error is about, when there is one. */
  readonly flag: string | undefined;
  constructor(message: string, flag?: string) {
    super(message);
    this.name = 'ConfigError';
    this.flag = flag;
  }
}
