// Errors of the client library: one typed class carrying the gRPC status code and the server's own message
// (e.g. "etcdserver: mvcc: required revision has been compacted"), plus the helpers callers test errors with.
import { status as Status } from '@grpc/grpc-js';

export { Status };

/** An error from a call: `code` is the gRPC status code, `message` the server's (or the transport's) message. */
export class ClientError extends Error {
  readonly code: Status;
  /** The endpoint the failing call went to, when known. */
  readonly endpoint?: string;
  constructor(code: Status, message: string, options?: { endpoint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ClientError';
    this.code = code;
    this.endpoint = options?.endpoint;
  }
}

/** Messages the server uses for errors that prove a request was not applied (safe to send elsewhere). */
const NOT_APPLIED = [
  'etcdserver: no leader',
  'etcdserver: not leader',
  'etcdserver: not capable',
  'etcdserver: too many requests',
  // Not "server stopped": a member that stops answers it also for proposals it may already have committed.
];

/** Transport messages meaning the request never reached a server (no connection was up). */
const NEVER_SENT = /No connection established|ECONNREFUSED|connection refused|Failed to connect|Name resolution failed|ENOTFOUND|EHOSTUNREACH|Channel has been shut down/i;

/** Turns whatever a grpc-js call failed with into a ClientError. */
export function toClientError(err: unknown, endpoint?: string): ClientError {
  if (err instanceof ClientError) return err;
  const e = err as { code?: unknown; details?: unknown; message?: unknown };
  if (typeof e?.code === 'number' && e.code >= 0 && e.code <= 16) {
    // grpc-js puts "<code> <NAME>: <details>" into message; the server's text is `details`.
    const details = typeof e.details === 'string' && e.details !== '' ? e.details : String(e.message ?? '');
    return new ClientError(e.code as Status, details, { endpoint, cause: err });
  }
  return new ClientError(Status.UNKNOWN, String(e?.message ?? err), { endpoint, cause: err });
}

/**
 * True when `err` says the client connection was cancelled or closed (gRPC status Canceled). This replaces
 * comparisons with the old "grpc: the client connection is closing" error value.
 */
export function isConnCanceled(err: unknown): boolean {
  if (err == null) return false;
  const code = (err as { code?: unknown }).code;
  if (code === Status.CANCELLED) return true;
  const msg = String((err as { message?: unknown }).message ?? '');
  return /client connection is closing|Channel has been shut down/.test(msg);
}

/** True when the deadline passed while the channel had no transport to send on (a member whose address is gone). */
export function waitedForTransport(err: ClientError): boolean {
  return err.code === Status.DEADLINE_EXCEEDED && /Waiting for LB pick/.test(err.message);
}

/** True when the call may be retried on another endpoint even though it mutates: it was provably not applied. */
export function provablyNotApplied(err: ClientError): boolean {
  if (NOT_APPLIED.includes(err.message)) return true;
  return (err.code === Status.UNAVAILABLE && NEVER_SENT.test(err.message)) || waitedForTransport(err);
}

/** True when a read (or any idempotent call) should go to the next endpoint. */
export function retryableRead(err: ClientError): boolean {
  if (err.code === Status.UNAVAILABLE || provablyNotApplied(err)) return true;
  return err.message === 'etcdserver: leader changed' || err.message === 'etcdserver: request timed out';
}
