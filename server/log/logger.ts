// The logging contract every layer uses. The implementation (plain text or JSON lines, outputs,
// run-time level) lives beside this file; layers receive a Logger and never pick a format themselves.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds these fields to every record (e.g. the package or member). */
  child(fields: LogFields): Logger;
}

/** Discards everything: for pure modules' tests and for callers that pass no logger. */
export const nopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return nopLogger;
  },
};

/** A process logger with a run-time level (PUT /config/local/log) and an orderly close (flush outputs). */
export interface ControllableLogger extends Logger {
  /** Records at a fatal/critical level; the caller decides whether to exit. */
  fatal(msg: string, fields?: LogFields): void;
  setLevel(level: LogLevel): void;
  level(): LogLevel;
  /** True when records at this level are written (lets callers skip building expensive fields). */
  enabled(level: LogLevel): boolean;
  close(): Promise<void>;
}
