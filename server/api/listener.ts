// One client port for both gRPC (HTTP/2) and plain HTTP/1.1, like the reference's client URL.
//
// Plain TCP: the first bytes decide. An HTTP/2 client starts with the fixed connection preface
// "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (gRPC clients use HTTP/2 with prior knowledge), which no HTTP/1.x
// request line can start with; such connections go to the gRPC server, everything else to a node
// HTTP/1.1 server. Both get the socket with the sniffed bytes pushed back (unshift).
//
// TLS: we terminate TLS ourselves and route on ALPN. gRPC clients offer only "h2"; HTTP clients
// offer "http/1.1" (often with "h2" too, e.g. curl). So a client that offers http/1.1 gets it and the
// HTTP handler; one that offers only h2 gets the gRPC server. (The reference instead inspects each
// HTTP/2 request's content-type; grpc-js gives us no hook for that, so an HTTP/2-only non-gRPC
// client would reach the gRPC server and be answered 415.) The decrypted TLSSocket is handed to
// gRPC, so `call.getAuthContext()` still reports the client certificate.
//
// gRPC sockets enter through `grpc.Server.createConnectionInjector` (grpc-js >= 1.10), so the
// caller's grpc.Server (with its services and options) serves them without binding a port itself.

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { rmSync } from 'node:fs';
import { isSecureUrl, isUnixUrl, unixSocketPath } from '../transport/unix-url.js';
import { certNameAllowed, certNames } from '../transport/cert-names.js';
import { refusedByCrl, type RevocationList } from '../transport/revocation.js';
import * as grpc from '@grpc/grpc-js';
import { nopLogger, type Logger } from '../log/logger.js';

/** The HTTP/2 client connection preface (RFC 9113 section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Server-side TLS material for an https:// client URL. */
export interface ClientListenerTls {
  cert: Buffer;
  key: Buffer;
  /** CA bundle used to verify client certificates. */
  ca?: Buffer;
  /** Ask clients for a certificate (the reference's --client-cert-auth). */
  requestCert?: boolean;
  /** Refuse clients whose certificate does not verify against ca. Default: same as requestCert. */
  rejectUnauthorized?: boolean;
  /** --client-crl-file: a connection presenting a certificate it revokes is closed after the handshake. */
  crl?: RevocationList;
  /** --client-cert-allowed-hostname: a client certificate must name one of these SAN hostnames. */
  allowedHostnames?: string[];
  /** --tls-min-version / --tls-max-version. */
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
}

export interface ClientListenerOptions {
  /** http://host:port or https://host:port; port 0 picks a free port. */
  url: URL;
  /** Serves the HTTP/2 connections; its services should already be added. */
  grpcServer: grpc.Server;
  /** Serves the HTTP/1.1 requests (/version, /health, /metrics, /v3 gateway, /v2). */
  http: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  /** Required for https URLs, refused for http ones. */
  tls?: ClientListenerTls;
  logger?: Logger;
  /**
   * What this listener serves: both protocols (default), gRPC only (--listen-client-urls when
   * --listen-client-http-urls is set) or HTTP/1.1 only (--listen-client-http-urls). Connections of the
   * other protocol are closed.
   */
  serve?: 'both' | 'grpc' | 'http';
  /** Close a connection that has not sent enough bytes to be classified after this long. Default 30 s. */
  sniffTimeoutMs?: number;
}

export interface ClientListener {
  /** The bound address (with the real port when the URL asked for port 0). */
  address: AddressInfo;
  /** The URL with the real port. */
  url: URL;
  /**
   * Stops accepting, lets open calls and requests finish for up to graceMs (default 5 s), then
   * destroys what is left. Resolves when every connection is gone. Does not shut the grpc.Server down.
   */
  close(graceMs?: number): Promise<void>;
}

export type ListenErrorCode =
  | 'BAD_URL'
  | 'TLS_REQUIRED'
  | 'TLS_UNEXPECTED'
  | 'ADDRESS_IN_USE'
  | 'ADDRESS_NOT_AVAILABLE'
  | 'BAD_HOST'
  | 'PERMISSION_DENIED'
  | 'LISTEN_FAILED';

/** Why a client URL could not be served; the message names the URL. */
export class ListenError extends Error {
  readonly code: ListenErrorCode;
  readonly url: string;
  constructor(code: ListenErrorCode, url: string, detail: string, options?: { cause?: unknown }) {
    super(`cannot listen on client URL ${url}: ${detail}`, options);
    this.name = 'ListenError';
    this.code = code;
    this.url = url;
  }
}

/** Binds opts.url and serves gRPC and HTTP/1.1 on it. */
export async function startClientListener(opts: ClientListenerOptions): Promise<ClientListener> {
  const { url } = opts;
  const urlText = url.toString().replace(/\/$/, '');
  const logger = opts.logger ?? nopLogger;
  const secure = isSecureUrl(url);
  const unix = isUnixUrl(url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && !unix) {
    throw new ListenError('BAD_URL', urlText, `scheme ${url.protocol} is not http, https, unix or unixs`);
  }
  if (!unix && url.pathname !== '/' && url.pathname !== '') {
    throw new ListenError('BAD_URL', urlText, 'a listen URL has no path');
  }
  if (secure && !opts.tls) throw new ListenError('TLS_REQUIRED', urlText, 'https needs a certificate and key');
  if (!secure && opts.tls) throw new ListenError('TLS_UNEXPECTED', urlText, 'TLS material given for an http URL');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1'); // [::1] -> ::1
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);

  // Everything handed to gRPC: TLS already removed, so the injector is always "insecure".
  const injector = opts.grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const httpServer = http.createServer(opts.http);
  // Let in-flight responses finish on close, but tell keep-alive clients to go away.
  let closing = false;
  httpServer.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
  });

  const sockets = new Set<net.Socket>();
  const httpSockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    // Small responses must not wait for the client's delayed ACK (Nagle): gRPC writes headers, data and
    // trailers separately, which otherwise costs ~40 ms per call.
    s.setNoDelay(true);
    // whoever owns the socket later, an unhandled 'error' must never crash the process
    s.on('error', (err) => logger.debug('client connection error', { error: err.message, remote: s.remoteAddress }));
    s.once('close', () => {
      sockets.delete(s);
      httpSockets.delete(s);
    });
  };
  const serve = opts.serve ?? 'both';
  const toGrpc = (s: net.Socket) => {
    if (serve === 'http') return void s.destroy();
    injector.injectConnection(s);
  };
  const toHttp = (s: net.Socket) => {
    if (serve === 'grpc') return void s.destroy();
    httpSockets.add(s);
    s.once('close', () => httpSockets.delete(s)); // a TLSSocket is not the raw socket `track` saw
    httpServer.emit('connection', s);
  };
  const sniffTimeoutMs = opts.sniffTimeoutMs ?? 30000;

  let listener: net.Server;
  if (secure) {
    const t = opts.tls!;
    listener = tls.createServer(
      {
        cert: t.cert,
        key: t.key,
        ca: t.ca,
        requestCert: t.requestCert ?? false,
        rejectUnauthorized: t.rejectUnauthorized ?? t.requestCert ?? false,
        minVersion: t.minVersion,
        maxVersion: t.maxVersion,
        ALPNCallback: ({ protocols }) => pickAlpn(serve === 'grpc' ? protocols.filter((p) => p === 'h2') : serve === 'http' ? protocols.filter((p) => p !== 'h2') : protocols),
      },
      (socket) => {
        if (closing) return void socket.destroy();
        socket.on('error', (err) => logger.debug('client connection error', { error: err.message, remote: socket.remoteAddress }));
        if (t.crl && refusedByCrl(t.crl, socket, logger)) return void socket.destroy();
        if (t.allowedHostnames && t.allowedHostnames.length > 0 && !certNameAllowed(socket.getPeerCertificate(), [], t.allowedHostnames)) {
          logger.warn('rejected client connection: certificate names no allowed hostname', { remote: socket.remoteAddress, ...certNames(socket.getPeerCertificate()), 'allowed-hostname': t.allowedHostnames });
          return void socket.destroy();
        }
        if (socket.alpnProtocol === 'h2') toGrpc(socket);
        else toHttp(socket);
      },
    );
    listener.on('connection', track);
    listener.on('tlsClientError', (err, socket) => {
      logger.debug('rejected TLS client', { error: err.message, remote: socket.remoteAddress });
    });
  } else {
    listener = net.createServer((socket) => {
      track(socket);
      if (closing) return void socket.destroy();
      sniff(socket, sniffTimeoutMs, (isHttp2) => (isHttp2 ? toGrpc(socket) : toHttp(socket)));
    });
  }

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      injector.destroy(); // unregister it from the grpc.Server
      reject(listenError(err, urlText));
    };
    listener.once('error', onError);
    try {
      if (unix) rmSync(unixSocketPath(url), { force: true }); // a stale socket file of an earlier run
      listener.listen(unix ? { path: unixSocketPath(url), exclusive: true } : { host, port, exclusive: true }, () => {
        listener.off('error', onError);
        const a = listener.address();
        resolve(typeof a === 'string' || a === null ? { address: unixSocketPath(url), family: 'unix', port: 0 } : a);
      });
    } catch (err) {
      // e.g. a port out of range throws synchronously
      injector.destroy();
      reject(new ListenError('BAD_URL', urlText, (err as Error).message, { cause: err }));
    }
  });
  listener.on('error', (err) => logger.error('client listener error', { url: urlText, error: err.message }));
  const boundUrl = new URL(url.toString());
  if (!unix) boundUrl.port = String(address.port);
  let closed: Promise<void> | undefined;
  const close = (graceMs = 5000): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      injector.drain(graceMs); // GOAWAY to gRPC clients, force-cancel their streams after graceMs
      injector.destroy();
      const deadline = setTimeout(() => {
        for (const s of sockets) s.destroy();
      }, graceMs);
      deadline.unref();
      while (sockets.size > 0) {
        // keep-alive sockets become idle as their last response finishes: end them then
        for (const s of httpSockets) if (!isBusy(s) && !s.writableEnded) s.end();
        await new Promise((r) => setTimeout(r, 20));
      }
      clearTimeout(deadline);
      await stopped;
      logger.info('stopped serving client traffic', { url: boundUrl.toString().replace(/\/$/, '') });
    })();
    return closed;
  };

  return { address, url: boundUrl, close };
}

/** ALPN choice: http/1.1 whenever offered (HTTP clients), else h2 (gRPC clients offer only h2). */
export function pickAlpn(offered: readonly string[]): string | undefined {
  if (offered.includes('http/1.1')) return 'http/1.1';
  if (offered.includes('h2')) return 'h2';
  if (offered.includes('http/1.0')) return 'http/1.0';
  return undefined;
}

/**
 * Reads until the bytes either match the whole HTTP/2 preface or diverge from it, pushes them back,
 * and reports which it was. An HTTP/1 request line diverges at the first byte or so.
 */
function sniff(socket: net.Socket, timeoutMs: number, done: (isHttp2: boolean) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const finish = (isHttp2: boolean) => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.pause();
    socket.unshift(buffered);
    done(isHttp2);
    // the new owner attached its own reader; make sure the pushed-back bytes flow to it
    process.nextTick(() => socket.resume());
  };
  const onClose = () => clearTimeout(timer);
  const onData = (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const n = Math.min(buffered.length, HTTP2_PREFACE.length);
    if (!buffered.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n))) finish(false);
    else if (n === HTTP2_PREFACE.length) finish(true);
    // else: a prefix of the preface so far; wait for more
  };
  socket.on('data', onData);
  socket.on('close', onClose);
}

/** Whether an HTTP/1.1 socket is in the middle of a request (node marks idle ones). */
function isBusy(socket: net.Socket): boolean {
  // node sets _httpMessage while a response is being written on the socket
  return (socket as net.Socket & { _httpMessage?: unknown })._httpMessage != null;
}

function listenError(err: NodeJS.ErrnoException, url: string): ListenError {
  switch (err.code) {
    case 'EADDRINUSE':
      return new ListenError('ADDRESS_IN_USE', url, 'address already in use', { cause: err });
    case 'EADDRNOTAVAIL':
      return new ListenError('ADDRESS_NOT_AVAILABLE', url, 'cannot assign requested address (not an address of this host)', {
        cause: err,
      });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new ListenError('BAD_HOST', url, `host name does not resolve (${err.code})`, { cause: err });
    case 'EACCES':
    case 'EPERM':
      return new ListenError('PERMISSION_DENIED', url, 'permission denied (privileged port?)', { cause: err });
    default:
      return new ListenError('LISTEN_FAILED', url, err.message, { cause: err });
  }
}
