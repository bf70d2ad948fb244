// Level order and the names each logger family uses for a level. One place so that the zap "level"
// key, the capnslog letter and PUT /config/local/log all agree.
import type { LogLevel } from './logger.js';
import { CodedError } from '../coded-error.js';

/** Severity rank: a record is written when its rank is >= the logger's rank. */
export const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

/** Value of the zap "level" key. */
export const ZAP_LEVEL_NAME: Readonly<Record<LogLevel, string>> = { debug: 'debug', info: 'info', warn: 'warn', error: 'error', fatal: 'fatal' };

/** capnslog's one-letter level (CRITICAL is its most severe one). */
export const CAPNSLOG_LETTER: Readonly<Record<LogLevel, string>> = { debug: 'D', info: 'I', warn: 'W', error: 'E', fatal: 'C' };

export class LevelError extends CodedError<'LOG_LEVEL'> {
  constructor(readonly given: string) {
    super('LOG_LEVEL', `unknown log level "${given}" (use one of DEBUG, INFO, WARNING, ERROR, CRITICAL, or debug, info, warn, error, fatal)`);
  }
}

// capnslog names and letters (also its numeric aliases), then zap's names. NOTICE and TRACE have no
// level of their own here: they fold into their nearest neighbour.
const NAMES: ReadonlyMap<string, LogLevel> = new Map<string, LogLevel>([
  ['CRITICAL', 'fatal'], ['C', 'fatal'],
  ['ERROR', 'error'], ['E', 'error'], ['0', 'error'],
  ['WARNING', 'warn'], ['W', 'warn'], ['1', 'warn'],
  ['NOTICE', 'info'], ['N', 'info'], ['2', 'info'],
  ['INFO', 'info'], ['I', 'info'], ['3', 'info'],
  ['DEBUG', 'debug'], ['D', 'debug'], ['4', 'debug'],
  ['TRACE', 'debug'], ['T', 'debug'], ['5', 'debug'],
  ['WARN', 'warn'], ['DPANIC', 'fatal'], ['PANIC', 'fatal'], ['FATAL', 'fatal'],
]);

/** Map a level name (capnslog's DEBUG/INFO/NOTICE/WARNING/ERROR/CRITICAL/TRACE or zap's, any case) to a LogLevel. */
export function parseLevel(name: string): LogLevel {
  const level = NAMES.get(name.trim().toUpperCase());
  if (level === undefined) throw new LevelError(name);
  return level;
}

/** The zap level names --log-level accepts (as the reference: debug, info, warn, error, panic, fatal). */
export const ZAP_FLAG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'dpanic', 'panic', 'fatal'];
