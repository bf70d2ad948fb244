// The HTTP(S) listener on each --listen-peer-urls address: raft traffic via the Transport, plus the
// small endpoints other members call (GET /version for cluster version negotiation, GET /members for
// bootstrapping and member checks, POST /leases/<op> and POST /members/promote/<id>: calls a follower hands
// to the leader; GET /members/hashkv: a peer's corruption check; GET /downgrade/enabled: a joining member's check).

import * as http from 'node:http';
import * as https from 'node:https';
import { rmSync } from 'node:fs';
import { isSecureUrl, isUnixUrl, unixSocketPath } from './unix-url.js';
import type { AddressInfo } from 'node:net';

import type { Logger } from '../log/logger.js';
import type { Transport } from './transport.js';
import type { SecureVersion, TLSSocket } from 'node:tls';
import { certNameAllowed, certNames } from './cert-names.js';
import { refusedByCrl, type RevocationList } from './revocation.js';
import { TransportError } from './wire.js';

/** Server-side TLS for https listen-peer-urls. */
export interface PeerServerTlsOptions {
  cert: Buffer;
  key: Buffer;
  /** Trusted CA for client certificates. */
  ca?: Buffer;
  /** Require and verify a client certificate (--peer-client-cert-auth). */
  clientCertAuth?: boolean;
  /** --peer-crl-file: a connection presenting a certificate it revokes is closed after the handshake. */
  crl?: RevocationList;
  /** --peer-cert-allowed-cn: a verified peer certificate must have one of these common names... */
  allowedCNs?: string[];
  /** ...or (--peer-cert-allowed-hostname) one of these SAN hostnames. */
  allowedHostnames?: string[];
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
}

export interface PeerServerOptions {
  urls: string[];
  transport: Transport;
  logger: Logger;
  tls?: PeerServerTlsOptions;
  routes: {
    version(): object;
    members(): object[];
    /** Sent as X-Etcd-Cluster-ID on every answer, so a joining member learns which cluster it reached. */
    clusterId?(): string;
    /** POST /leases/<op>: a follower forwarding a lease call (keep-alive, time-to-live) to the leader. */
    leases?(op: string, body: string): { status: number; json: object };
    /** POST /members/promote/<id in hex>: a follower handing a learner promotion to the leader. */
    promote?(id: string): Promise<{ status: number; json: object }>;
    /** GET /downgrade/enabled: whether a downgrade job is enabled, after a linearizable read (a joining member asks). */
    downgradeEnabled?(): Promise<boolean>;
    /** /members/hashkv: a peer's corruption check asks for this member's KV hash at a revision. */
    hashKV?(method: string, path: string, clusterId: string | undefined, body: string): { status: number; body: string; json?: boolean };
  };
}

/** A running peer listener set. */
export interface PeerServer {
  /** The bound addresses, in the order of `urls` (useful when a URL asked for port 0). */
  readonly addresses: AddressInfo[];
  close(): Promise<void>;
}

function sendJson(res: http.ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts one listener per URL; rejects with a TransportError naming the URL if any cannot be bound. */
export async function startPeerServer(opts: PeerServerOptions): Promise<PeerServer> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (opts.transport.handleRequest(req, res)) return;
    const path = (req.url ?? '').split('?')[0];
    if (opts.routes.clusterId) res.setHeader('X-Etcd-Cluster-ID', opts.routes.clusterId());
    if (path.startsWith('/leases/') && opts.routes.leases) {
      if (req.method !== 'POST') {
        res.writeHead(405, { Allow: 'POST', 'Content-Type': 'text/plain' }).end('Method Not Allowed\n');
        return;
      }
      const leases = opts.routes.leases;
      const op = path.slice('/leases/'.length);
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      req.on('end', () => {
        const r = leases(op, body);
        const text = JSON.stringify(r.json);
        res.writeHead(r.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
      });
      return;
    }
    if (path.startsWith('/members/promote/') && opts.routes.promote) {
      if (req.method !== 'POST') {
        res.writeHead(405, { Allow: 'POST', 'Content-Type': 'text/plain' }).end('Method Not Allowed\n');
        return;
      }
      void opts.routes.promote(path.slice('/members/promote/'.length)).then((r) => {
        const text = JSON.stringify(r.json);
        res.writeHead(r.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
      });
      return;
    }
    if (path.startsWith('/members/hashkv') && opts.routes.hashKV) {
      const hashKV = opts.routes.hashKV;
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      req.on('end', () => {
        const header = req.headers['x-etcd-cluster-id'];
        const r = hashKV(req.method ?? 'GET', path, Array.isArray(header) ? header[0] : header, body);
        const type = r.json ? 'application/json' : 'text/plain; charset=utf-8';
        res.writeHead(r.status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(r.body), ...(r.status === 405 ? { Allow: 'GET' } : {}) }).end(r.body);
      });
      return;
    }
    if (path === '/downgrade/enabled' && opts.routes.downgradeEnabled) {
      if (req.method !== 'GET') {
        res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain' }).end('Method Not Allowed\n');
        return;
      }
      void opts.routes.downgradeEnabled().then(
        (on) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(String(on)),
        (e: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`failed linearized read: ${(e as Error).message}`),
      );
      return;
    }
    const route = path === '/version' ? opts.routes.version : path === '/members' ? opts.routes.members : undefined;
    if (!route) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain' }).end('Method Not Allowed\n');
      return;
    }
    try {
      sendJson(res, route());
    } catch (err) {
      opts.logger.warn('failed to serve peer request', { path, error: String(err) });
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error\n');
    }
  };

  const servers: http.Server[] = [];
  const addresses: AddressInfo[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
  };

  try {
    for (const raw of opts.urls) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new TransportError('ERR_PEER_URL', `invalid listen-peer-url ${JSON.stringify(raw)}`, raw);
      }
      const unix = isUnixUrl(url);
      const secure = isSecureUrl(url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:' && !unix) {
        throw new TransportError('ERR_PEER_URL', `listen-peer-url ${raw}: unsupported scheme ${url.protocol.replace(':', '')}`, raw);
      }
      if (secure && !opts.tls) {
        throw new TransportError('ERR_PEER_URL', `listen-peer-url ${raw} is ${url.protocol.replace(':', '')} but no peer certificate and key were given`, raw);
      }
      const server =
        secure && opts.tls
          ? https.createServer(
              {
                cert: opts.tls.cert,
                key: opts.tls.key,
                ca: opts.tls.ca,
                requestCert: opts.tls.clientCertAuth ?? false,
                rejectUnauthorized: opts.tls.clientCertAuth ?? false,
                minVersion: opts.tls.minVersion,
                maxVersion: opts.tls.maxVersion,
              },
              handler,
            )
          : http.createServer(handler);
      const allowedCNs = opts.tls?.allowedCNs ?? [];
      const allowedHostnames = opts.tls?.allowedHostnames ?? [];
      const crl = opts.tls?.crl;
      if (secure && (crl || allowedCNs.length > 0 || allowedHostnames.length > 0)) {
        // A connection with a revoked certificate, or one naming no allowed CN or hostname, is closed before any request.
        server.on('secureConnection', (sock: TLSSocket) => {
          if (crl && refusedByCrl(crl, sock, opts.logger)) return void sock.destroy();
          if (allowedCNs.length === 0 && allowedHostnames.length === 0) return;
          const cert = sock.getPeerCertificate();
          if (!certNameAllowed(cert, allowedCNs, allowedHostnames)) {
            opts.logger.warn('rejected peer connection: certificate names no allowed common name or hostname', { 'remote-addr': `${sock.remoteAddress}:${sock.remotePort}`, ...certNames(cert), 'allowed-cn': allowedCNs, 'allowed-hostname': allowedHostnames });
            sock.destroy();
          }
        });
      }
      // Streams are long-lived request bodies: Node's default 5-minute whole-request limit would cut them.
      server.requestTimeout = 0;
      server.keepAliveTimeout = 30_000;
      servers.push(server);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      await new Promise<void>((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException): void => {
          const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EADDRNOTAVAIL' ? 'cannot assign requested address' : err.message;
          reject(new TransportError('ERR_PEER_LISTEN', `cannot listen on listen-peer-url ${raw}: listen tcp ${host}:${port}: bind: ${why}`, raw));
        };
        server.once('error', onError);
        if (unix) rmSync(unixSocketPath(url), { force: true }); // a stale socket file of an earlier run
        server.listen(unix ? { path: unixSocketPath(url) } : { host, port }, () => {
          server.off('error', onError);
          resolve();
        });
      });
      const bound = server.address();
      if (bound && typeof bound === 'object') addresses.push(bound);
      server.on('error', (err) => opts.logger.error('peer listener error', { address: raw, error: String(err) }));
      // TLS handshake failures (e.g. a client certificate our CA did not issue) never reach the handler.
      server.on('tlsClientError', (err, sock) =>
        opts.logger.warn('rejected connection', { 'remote-addr': `${sock.remoteAddress}:${sock.remotePort}`, error: err.message }),
      );
      opts.logger.info('serving peer traffic', { address: bound && typeof bound === 'object' ? `${host.includes(':') ? `[${host}]` : host}:${bound.port}` : unixSocketPath(url) });
    }
  } catch (err) {
    // The failed server never listened; close the ones that did.
    const listening = servers.filter((s) => s.listening);
    servers.length = 0;
    servers.push(...listening);
    await closeAll();
    throw err;
  }

  return {
    addresses,
    close: closeAll,
  };
}
