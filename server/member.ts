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

export interface MemberStartOptions extends MemberOptions {
  /** --listen-client-urls */
  listenClientURLs: string[];
  /** --listen-metrics-urls: /metrics and /health only. */
  listenMetricsURLs?: string[];
  clientTls?: ClientListenerTls;
  /** Run-time log level changes (PUT /config/local/log); throws on an unknown level. */
  setLogLevel?: (level: string) => void;
  /** Streaming RPC handlers by service (watch, lease keep-alive, snapshot), added by the API layer. */
  streams?: (server: SvcServer, api: V3Api) => Record<string, StreamHandlers>;
}

export interface RunningMember {
  server: SvcServer;
  api: V3Api;
  /** The client URLs actually bound (ports resolved). */
  clientURLs: string[];
  memberId: string;
  /** Stop gracefully: leadership moves away first when this member leads. */
  close(): Promise<void>;
}

export async function startMember(o: MemberStartOptions): Promise<RunningMember> {
  const server = await SvcServer.start(o);
  const api = new V3Api(server);
  const metrics = createMetrics(server);
  const app = createHttpApp({
    server,
    api,
    metrics,
    setLogLevel: o.setLogLevel ?? (() => {
      throw new Error('the log level cannot be changed for this member');
    }),
  });
  const grpcServer = createGrpcServer(api, (o.streams ?? streamHandlers)(server, api), o.logger, { maxRequestBytes: o.maxRequestBytes });
  const listeners: ClientListener[] = [];
  const metricsListeners: MetricsListener[] = [];
  try {
    for (const u of o.listenClientURLs) {
      listeners.push(await startClientListener({ url: new URL(u), grpcServer, http: app, tls: o.clientTls, logger: o.logger }));
    }
    for (const u of o.listenMetricsURLs ?? []) metricsListeners.push(await startMetricsListener(new URL(u), app, o.clientTls, o.logger));
  } catch (e) {
    for (const l of listeners) await l.close(0);
    for (const l of metricsListeners) await l.close();
    await server.stop({ transferLeadership: false });
    throw e;
  }
  for (const l of listeners) o.logger.info('serving client traffic', { address: l.url.toString().replace(/\/$/, '') });
  let closing: Promise<void> | undefined;
  return {
    server,
    api,
    clientURLs: listeners.map((l) => l.url.toString().replace(/\/$/, '')),
    memberId: idHex(server.memberId),
    close() {
      closing ??= (async () => {
        await server.stop();
        await Promise.all([...listeners.map((l) => l.close(1000)), ...metricsListeners.map((l) => l.close())]);
        grpcServer.forceShutdown();
      })();
      return closing;
    },
  };
}
