// The gRPC server of a member: the reference's etcdserverpb services, backed by the same handlers as the JSON
// gateway. Errors carry the reference's status codes and messages so its clients react as they would to it.
import * as grpc from '@grpc/grpc-js';
import { serviceDefinitions, type ServiceKey } from '../wire/index.js';
import { ServerError, Code } from '../core/errors.js';
import type { UnaryLookup } from './v3/service-methods.js';
import type { RequestMeta } from './v3/auth-gate.js';
import type { Logger } from '../log/logger.js';

export type StreamHandlers = Partial<Record<string, grpc.UntypedHandleCall>>;

/** The client's auth token from gRPC metadata (the reference's key is "token"). */
export function tokenOf(md: grpc.Metadata): string | undefined {
  const v = md.get('token')[0];
  return v === undefined ? undefined : String(v);
}

/**
 * What a call carries for authentication: its token, and the CommonName of the client certificate. grpc-js reports
 * a certificate only for a TLS socket that verified it, which the client listener asks for only with
 * --client-cert-auth (the reference takes the name from the first verified chain in that case alone).
 */
export function requestMetaOf(call: { metadata: grpc.Metadata; getAuthContext?: () => { sslPeerCertificate?: { subject?: { CN?: string | string[] } } } }): RequestMeta {
  const token = tokenOf(call.metadata);
  const cn = call.getAuthContext?.().sslPeerCertificate?.subject?.CN;
  const certUser = Array.isArray(cn) ? cn[0] : cn;
  return certUser ? { token, certUser } : { token };
}

/** Turn any error into a gRPC status the reference's clients understand. */
export function toGrpcError(e: unknown): Partial<grpc.StatusObject> {
  if (e instanceof ServerError) return { code: e.grpcCode, details: e.message };
  const err = e as { code?: unknown; message?: string };
  if (typeof err?.code === 'number' && err.code >= 0 && err.code <= 16) return { code: err.code, details: err.message ?? '' };
  return { code: Code.Unknown, details: String(err?.message ?? e) };
}

/** Unary calls that may wait for a long time (for other clients to act). */
const WAITING_CALLS = new Set(['Campaign', 'Lock']);

/** Build the gRPC server: every unary method the API implements, plus the given streaming handlers. */
export function createGrpcServer(api: UnaryLookup, streams: Record<string, StreamHandlers>, logger: Logger, opts: { maxRequestBytes: number; maxConcurrentStreams?: number; keepaliveIntervalMs?: number; keepaliveTimeoutMs?: number }): grpc.Server {
  const server = new grpc.Server({
    // The reference accepts requests up to --max-request-bytes plus its gRPC overhead allowance.
    'grpc.max_receive_message_length': opts.maxRequestBytes + 512 * 1024,
    'grpc.max_send_message_length': 2 ** 31 - 1,
    // Channelz bookkeeping (per-call counters and socket registry) costs CPU on every call and nothing reads it.
    'grpc.enable_channelz': 0,
    // --max-concurrent-streams: HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of every client connection.
    ...(opts.maxConcurrentStreams !== undefined ? { 'grpc.max_concurrent_streams': opts.maxConcurrentStreams } : {}),
    // --grpc-keepalive-interval / --grpc-keepalive-timeout: server-to-client pings (as the reference, only
    // when both are > 0).
    ...(opts.keepaliveIntervalMs && opts.keepaliveTimeoutMs ? { 'grpc.keepalive_time_ms': opts.keepaliveIntervalMs, 'grpc.keepalive_timeout_ms': opts.keepaliveTimeoutMs } : {}),
  });
  const defs = serviceDefinitions();
  for (const [key, def] of Object.entries(defs) as Array<[ServiceKey, grpc.ServiceDefinition]>) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(def)) {
      const stream = streams[key]?.[name];
      if (stream) {
        impl[name] = stream;
        continue;
      }
      const handler = api.handler(name);
      if (method.requestStream || method.responseStream) {
        impl[name] = unimplementedStream(name);
      } else if (handler) {
        const waits = WAITING_CALLS.has(name);
        impl[name] = ((call: grpc.ServerUnaryCall<object, object>, callback: grpc.sendUnaryData<object>) => {
          let signal: AbortSignal | undefined;
          if (waits) {
            // A campaign or lock waiter whose caller went away must give up (and leave no key behind).
            const ac = new AbortController();
            call.on('cancelled', () => ac.abort());
            signal = ac.signal;
          }
          handler(call.request, { ...requestMetaOf(call), signal }).then(
            (res) => callback(null, res),
            (err) => {
              if (!(err instanceof ServerError)) logger.warn('request failed', { method: name, error: (err as Error)?.stack ?? String(err) });
              callback(toGrpcError(err));
            },
          );
        }) as grpc.handleUnaryCall<object, object>;
      } else {
        impl[name] = ((_call: unknown, callback: grpc.sendUnaryData<object>) => {
          callback({ code: Code.Unimplemented, details: `etcdserver: ${name} is not supported by this member` });
        }) as grpc.handleUnaryCall<object, object>;
      }
    }
    server.addService(def, impl);
  }
  return server;
}

function unimplementedStream(name: string): grpc.UntypedHandleCall {
  return ((call: grpc.ServerWritableStream<object, object>) => {
    call.emit('error', { code: Code.Unimplemented, details: `etcdserver: ${name} is not supported by this member` });
  }) as grpc.UntypedHandleCall;
}
