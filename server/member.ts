// One running svc member, composed: the consensus server, its client listeners (gRPC and HTTP on each client
// URL) and its metrics. The CLI and the embedding API both start members through here.
import { SvcServer } from './core/server.js';
import type { MemberOptions } from './core/options.js';
import { V3Api } from './api/v3/handlers.js';
import { createMetrics } from './api/metrics.js';
import { createHttpApp } from './api/http.js';
import { createGrpcServer, type StreamHandlers } from './api/grpc.js';
import { startClientListener, type ClientListener, type ClientListenerTls } from './api/listener.js';
import { startMetricsListener, type MetricsListener } from './api/metrics-listener.js';
import { idHex } from './cluster/ids.js';
import { streamHandlers } from './api/v3/streams.js';
import type { Logger } from './log/logger.js';

export interface MemberStartOptions extends MemberOptions {
  /** --listen-client-urls */
  listenClientURLs: string[];
  /** --listen-client-http-urls: HTTP-only listeners; when given, listenClientURLs serve gRPC only. */
  listenClientHttpURLs?: string[];
  /** --max-concurrent-streams: gRPC streams per client connection. */
  maxConcurrentStreams?: number;
  /** --grpc-keepalive-interval / --grpc-keepalive-timeout (ms; 0 disables the pings). */
  grpcKeepaliveIntervalMs?: number;
  grpcKeepaliveTimeoutMs?: number;
  /** --enable-grpc-gateway (default true). */
  enableGrpcGateway?: boolean;
  /** --listen-metrics-urls: /metrics and /health only. */
  listenMetricsURLs?: string[];
  clientTls?: ClientListenerTls;
  /** Run-time log level changes (PUT /config/local/log); throws on an unknown level. */
  setLogLevel?: (level: string) => void;
  /** The log format in use: the serving lines are worded as the reference words them in each. */
  logFormat?: 'zap' | 'capnslog';
  /** Logger of the "embed" package (the reference's serving lines come from it). Default: logger. */
  embedLogger?: Logger;
  /** Streaming RPC handlers by service (watch, lease keep-alive, snapshot), added by the API layer. */
  streams?: (server: SvcServer, api: V3Api) => Record<string, StreamHandlers>;
}

export interface RunningMember {
  server: SvcServer;
  api: V3Api;
  /** The client URLs actually bound (ports resolved). */
  clientURLs: string[];
  memberId: string;
  /** Stop gracefully, in the reference's order: client listeners drain (open calls served up to the request timeout), then leadership moves away (when this member leads) and the member stops. */
  close(): Promise<void>;
}

export async function startMember(o: MemberStartOptions): Promise<RunningMember> {
  const server = await SvcServer.start(o);
  const api = new V3Api({ core: server, kv: server.kv, limits: o, observers: server.observers });
  const metrics = createMetrics(server);
  const app = createHttpApp({
    server,
    api,
    metrics,
    enableGateway: o.enableGrpcGateway,
    maxConcurrentStreams: o.maxConcurrentStreams,
    setLogLevel: o.setLogLevel ?? (() => {
      throw new Error('the log level cannot be changed for this member');
    }),
  });
  const grpcServer = createGrpcServer(api, (o.streams ?? streamHandlers)(server, api), o.logger, {
    maxRequestBytes: o.maxRequestBytes,
    maxConcurrentStreams: o.maxConcurrentStreams,
    keepaliveIntervalMs: o.grpcKeepaliveIntervalMs,
    keepaliveTimeoutMs: o.grpcKeepaliveTimeoutMs,
  });
  const listeners: ClientListener[] = [];
  const metricsListeners: MetricsListener[] = [];
  try {
    const split = (o.listenClientHttpURLs ?? []).length > 0;
    // As the reference, certificates apply to https URLs; an http URL next to them is served in plain text.
    const tlsFor = (u: string) => (u.startsWith('https:') || u.startsWith('unixs:') ? o.clientTls : undefined);
    for (const u of o.listenClientURLs) {
      listeners.push(await startClientListener({ url: new URL(u), grpcServer, http: app, tls: tlsFor(u), logger: o.logger, serve: split ? 'grpc' : 'both' }));
    }
    for (const u of o.listenClientHttpURLs ?? []) {
      listeners.push(await startClientListener({ url: new URL(u), grpcServer, http: app, tls: tlsFor(u), logger: o.logger, serve: 'http' }));
    }
    for (const u of o.listenMetricsURLs ?? []) metricsListeners.push(await startMetricsListener(new URL(u), app, o.clientTls, o.logger));
  } catch (e) {
    for (const l of listeners) await l.close(0);
    for (const l of metricsListeners) await l.close();
    await server.stop({ transferLeadership: false });
    throw e;
  }
  const elog = o.embedLogger ?? o.logger;
  const capnslog = o.logFormat === 'capnslog';
  if (!capnslog) {
    elog.info('now serving peer/client/metrics', {
      'local-member-id': idHex(server.memberId),
      'initial-advertise-peer-urls': o.advertisePeerURLs,
      'listen-peer-urls': o.listenPeerURLs,
      'advertise-client-urls': o.advertiseClientURLs,
      'listen-client-urls': o.listenClientURLs,
      'listen-metrics-urls': o.listenMetricsURLs ?? [],
    });
  }
  // As the reference, a client listener announces itself once the member is published to the cluster
  // (ReadyNotify), although it accepts connections from the start.
  server.readyNotify().then(
    () => {
      for (const l of listeners) {
        const address = l.address.family === 'unix' ? l.address.address : `${l.address.address.includes(':') ? `[${l.address.address}]` : l.address.address}:${l.address.port}`;
        const secure = l.url.protocol === 'https:' || l.url.protocol === 'unixs:';
        if (capnslog) {
          elog.info('ready to serve client requests');
          elog.info(secure ? `serving client requests on ${address}` : `serving insecure client requests on ${address}, this is strongly discouraged!`);
        } else {
          if (o.release.zapReadyLine) elog.info('ready to serve client requests');
          elog.info(secure ? 'serving client traffic securely' : 'serving client traffic insecurely; this is strongly discouraged!', { address });
        }
      }
    },
    () => undefined, // stopped before it was ready: nothing to announce
  );
  let closing: Promise<void> | undefined;
  return {
    server,
    api,
    clientURLs: listeners.map((l) => l.url.toString().replace(/\/$/, '')),
    memberId: idHex(server.memberId),
    close() {
      closing ??= (async () => {
        const fields = { name: o.name, 'data-dir': o.dataDir, 'advertise-peer-urls': o.advertisePeerURLs, 'advertise-client-urls': o.advertiseClientURLs };
        elog.info('closing etcd server', fields);
        // The reference's order (embed.Etcd.Close): client servers stop first, gracefully within the request
        // timeout: they take no new connections and tell gRPC clients to go away, while calls already open
        // (watch streams above all) are still served by a running member and keep receiving events; what is
        // left at the timeout is closed. Only then the member stops (leadership transfer, raft, peers), so a
        // watch never sits open on a member that no longer applies anything.
        const graceMs = server.isStopped() ? 1000 : server.requestTimeoutMs();
        await Promise.all([...listeners.map((l) => l.close(graceMs)), ...metricsListeners.map((l) => l.close())]);
        grpcServer.forceShutdown();
        await server.stop();
        elog.info('closed etcd server', fields);
      })();
      return closing;
    },
  };
}
