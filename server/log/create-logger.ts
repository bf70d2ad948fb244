// The process logger: formats each record itself (zap JSON or capnslog text) and hands the finished
// line to winston, whose transports write it to the configured outputs. The level check happens
// before anything else, so a disabled level costs one comparison.
import winston from 'winston';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { ControllableLogger, LogFields, Logger, LogLevel } from './logger.js';
import { LEVEL_RANK } from './levels.js';
import { capnslogLine, textFields, zapConsoleLine, zapFields, zapLine } from './format.js';
import { CallerCache } from './caller.js';
import { CodedError } from '../coded-error.js';
import { RotatingFile, type LogRotation } from './rotate.js';

export type LoggerKind = 'capnslog' | 'zap';

export interface CreateLoggerOptions {
  logger: LoggerKind;
  /** "default" (= stderr), "stderr", "stdout", or file paths (appended to). Several only with zap. */
  outputs: string[];
  level: LogLevel;
  /** Package name: the capnslog prefix ("etcdserver: ...") and the first part of zap's caller. */
  pkg?: string;
  /** Add zap's "caller" key (default true). */
  caller?: boolean;
  /** --enable-log-rotation: the one file output is written through rotation with these settings. */
  rotation?: LogRotation;
  /** --log-format (3.6): zap's JSON lines (default) or its console encoding. */
  format?: 'json' | 'console';
}

export class LogSetupError extends CodedError<'LOG_SETUP'> {
  constructor(message: string) {
    super('LOG_SETUP', message);
  }
}

interface Sink {
  /** Queue a line; `urgent` writes it (and everything queued) now. */
  write(line: string, urgent: boolean): void;
  flush(): void;
  close(): void;
}

const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');
const URGENT = Symbol('urgent');
const WINSTON_LEVELS = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4 };

// winston's typings name the base class `transport`; at run time it is exported as `Transport`.
const TransportBase = (winston as unknown as { Transport: new (opts?: object) => winston.transport }).Transport;

class SinkTransport extends TransportBase {
  constructor(private readonly sink: Sink) {
    super({});
  }
  override log(info: Record<string | symbol, unknown>, next: () => void): void {
    this.sink.write(info[MESSAGE] as string, info[URGENT] === true);
    next();
  }
}

// Lines are batched and written once per event-loop turn (or when 64 KiB pile up): one system call
// per batch instead of one per line. Errors and fatal records are written at once, and whatever is
// queued is written when the process exits.
const FLUSH_BYTES = 64 * 1024;
const liveSinks = new Set<BufferedSink>();
let exitHookInstalled = false;

class BufferedSink implements Sink {
  private queued: string[] = [];
  private bytes = 0;
  private scheduled = false;

  constructor(
    private readonly out: (chunk: string) => void,
    private readonly release: () => void,
  ) {
    liveSinks.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const s of liveSinks) s.flush();
      });
    }
  }

  write(line: string, urgent: boolean): void {
    this.queued.push(line + '\n');
    this.bytes += line.length + 1;
    if (urgent || this.bytes >= FLUSH_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.queued.length === 0) return;
    const chunk = this.queued.length === 1 ? this.queued[0] : this.queued.join('');
    this.queued = [];
    this.bytes = 0;
    try {
      this.out(chunk);
    } catch {
      // A full disk or a closed pipe must not take the server down with it; the lines are lost.
    }
  }

  close(): void {
    this.flush();
    liveSinks.delete(this);
    this.release();
  }
}

function openSink(output: string, rotation?: LogRotation): Sink {
  if (output === 'default' || output === 'stderr') return new BufferedSink((c) => void process.stderr.write(c), () => {});
  if (output === 'stdout') return new BufferedSink((c) => void process.stdout.write(c), () => {});
  if (rotation) {
    let file: RotatingFile;
    try {
      file = new RotatingFile(output, rotation);
    } catch (e) {
      throw new LogSetupError(`cannot open log output "${output}": ${(e as Error).message}`);
    }
    return new BufferedSink((c) => file.write(c), () => file.close());
  }
  let fd: number;
  try {
    fd = openSync(output, 'a');
  } catch (e) {
    throw new LogSetupError(`cannot open log output "${output}": ${(e as Error).message}`);
  }
  return new BufferedSink((c) => void writeSync(fd, c), () => closeSync(fd));
}

interface Core {
  kind: LoggerKind;
  rank: number;
  level: LogLevel;
  caller: CallerCache | undefined;
  console: boolean;
  closed: boolean;
  wl: winston.Logger;
  sinks: Sink[];
}

class WinstonLogger implements ControllableLogger {
  constructor(
    private readonly core: Core,
    private readonly pkg: string,
    private readonly base: string,
  ) {}

  debug(msg: string, fields?: LogFields): void {
    if (this.core.rank <= 0) this.emit('debug', msg, fields, this.debug);
  }
  info(msg: string, fields?: LogFields): void {
    if (this.core.rank <= 1) this.emit('info', msg, fields, this.info);
  }
  warn(msg: string, fields?: LogFields): void {
    if (this.core.rank <= 2) this.emit('warn', msg, fields, this.warn);
  }
  error(msg: string, fields?: LogFields): void {
    if (this.core.rank <= 3) this.emit('error', msg, fields, this.error);
  }
  fatal(msg: string, fields?: LogFields): void {
    if (this.core.rank <= 4) this.emit('fatal', msg, fields, this.fatal);
  }

  child(fields: LogFields): Logger {
    return new WinstonLogger(this.core, this.pkg, this.base + this.render(fields));
  }

  /** The same outputs and level under another package name. */
  withPackage(pkg: string): WinstonLogger {
    return new WinstonLogger(this.core, pkg, this.base);
  }

  setLevel(level: LogLevel): void {
    if (this.core.closed) return;
    this.core.level = level;
    this.core.rank = LEVEL_RANK[level];
  }
  level(): LogLevel {
    return this.core.level;
  }
  enabled(level: LogLevel): boolean {
    return LEVEL_RANK[level] >= this.core.rank;
  }

  async close(): Promise<void> {
    const core = this.core;
    if (core.closed) return;
    core.closed = true;
    core.rank = Number.POSITIVE_INFINITY;
    await new Promise<void>((resolve) => {
      core.wl.once('finish', () => resolve());
      core.wl.end();
    });
    for (const s of core.sinks) s.close();
  }

  private render(fields: LogFields): string {
    return this.core.kind === 'zap' ? zapFields(fields) : textFields(fields);
  }

  private emit(level: LogLevel, msg: string, fields: LogFields | undefined, below: (msg: string, fields?: LogFields) => void): void {
    // Wall-clock milliseconds; the sub-millisecond part only fills capnslog's microsecond digits.
    const now = Date.now() + (performance.now() % 1);
    let line: string;
    if (this.core.kind === 'zap') {
      const caller = this.core.caller?.get(msg, below, this.pkg);
      line = (this.core.console ? zapConsoleLine : zapLine)(level, now, caller, msg, this.base, fields);
    } else {
      line = capnslogLine(level, now, this.pkg, msg, this.base, fields);
    }
    this.core.wl.write({ level, message: line, [LEVEL]: level, [MESSAGE]: line, [URGENT]: LEVEL_RANK[level] >= 3 });
  }
}

/** A logger writing zap JSON lines or capnslog text lines to the given outputs. */
export function createLogger(opts: CreateLoggerOptions): ControllableLogger & { withPackage(pkg: string): Logger } {
  if (opts.logger !== 'zap' && opts.logger !== 'capnslog') throw new LogSetupError(`unknown logger "${String(opts.logger)}" (use capnslog or zap)`);
  if (opts.outputs.length === 0) throw new LogSetupError('at least one log output is needed');
  if (opts.outputs.length > 1 && opts.logger !== 'zap') {
    throw new LogSetupError(`--logger=capnslog supports only 1 log output, got ${JSON.stringify(opts.outputs)}`);
  }
  if (!Object.hasOwn(LEVEL_RANK, opts.level)) throw new LogSetupError(`unknown log level "${String(opts.level)}"`);
  const sinks: Sink[] = [];
  try {
    for (const o of opts.outputs) sinks.push(openSink(o, opts.rotation));
  } catch (e) {
    for (const s of sinks) s.close();
    throw e;
  }
  const wl = winston.createLogger({
    levels: WINSTON_LEVELS,
    level: 'debug',
    // The line is finished before it reaches winston: pass it through untouched.
    format: { transform: (info) => info },
    transports: sinks.map((s) => new SinkTransport(s)),
    exitOnError: false,
  });
  const core: Core = { kind: opts.logger, rank: LEVEL_RANK[opts.level], level: opts.level, caller: opts.caller === false ? undefined : new CallerCache(), console: opts.format === 'console', closed: false, wl, sinks };
  return new WinstonLogger(core, opts.pkg ?? 'svc', '');
}

/** A logger for another package: the same outputs, with the package in the capnslog prefix and zap caller. */
export function packageLogger(logger: Logger, pkg: string): Logger {
  const l = logger as Logger & { withPackage?: (pkg: string) => Logger };
  return typeof l.withPackage === 'function' ? l.withPackage(pkg) : logger.child({ pkg });
}
