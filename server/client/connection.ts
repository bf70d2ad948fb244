// One connection per endpoint: a gRPC channel shared by the stubs of every service, and the credentials it
// was opened with. Endpoints are written like the reference's: "host:port", "http://host:port" or
// "https://host:port" (https, or any tls option, means TLS).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { loadClients, type UnaryMethod } from '../wire/index.js';

/** TLS settings: file paths or PEM contents. */
export interface TlsOptions {
  /** CA bundle to trust (path or PEM Buffer). */
  ca?: string | Buffer;
  /** Client certificate and key for servers that ask for one. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Accept any server certificate (testing only). */
  insecureSkipVerify?: boolean;
}

export type ServiceName = 'KV' | 'Watch' | 'Lease' | 'Cluster' | 'Maintenance' | 'Auth' | 'Health';

/** The wire contract's name of each service the client calls. */
export interface ServiceFq {
  KV: 'etcdserverpb.KV';
  Watch: 'etcdserverpb.Watch';
  Lease: 'etcdserverpb.Lease';
  Cluster: 'etcdserverpb.Cluster';
  Maintenance: 'etcdserverpb.Maintenance';
  Auth: 'etcdserverpb.Auth';
  Health: 'grpc.health.v1.Health';
}

/** A unary method of one service (the compiler rejects a name the .proto files do not have). */
export type MethodOf<S extends ServiceName> = UnaryMethod<ServiceFq[S]>;

/** A unary method of any of those services. */
export type ClientMethod = { [S in ServiceName]: MethodOf<S> }[ServiceName];

/** Splits "http://h:p" / "h:p" into the gRPC target and whether TLS is used. */
export function parseEndpoint(ep: string, tls: TlsOptions | undefined): { target: string; secure: boolean } {
  const m = /^(https?|unix|unixs):\/\/(.*)$/.exec(ep.trim());
  if (!m) return { target: ep.trim(), secure: tls !== undefined };
  const rest = m[2].replace(/\/+$/, '');
  return { target: rest, secure: m[1] === 'https' || m[1] === 'unixs' || (tls !== undefined && m[1] !== 'http') };
}

function pem(v: string | Buffer | undefined): Buffer | null {
  if (v === undefined) return null;
  return typeof v === 'string' ? readFileSync(v) : v;
}

/** The channel credentials for an endpoint. */
export function credentialsFor(secure: boolean, tls: TlsOptions | undefined): grpc.ChannelCredentials {
  if (!secure) return grpc.credentials.createInsecure();
  const verify: grpc.VerifyOptions = tls?.insecureSkipVerify ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {};
  return grpc.credentials.createSsl(pem(tls?.ca), pem(tls?.key), pem(tls?.cert), verify);
}

/** A live channel to one endpoint with a stub per service. */
export class Connection {
  readonly endpoint: string;
  readonly target: string;
  private base: grpc.Client;
  private readonly stubs = new Map<ServiceName, grpc.Client>();
  private readonly makeBase: () => grpc.Client;

  constructor(endpoint: string, tls: TlsOptions | undefined, channelOptions: grpc.ChannelOptions = {}) {
    this.endpoint = endpoint;
    const { target, secure } = parseEndpoint(endpoint, tls);
    this.target = target;
    this.makeBase = () => new grpc.Client(target, credentialsFor(secure, tls), {
      'grpc.max_receive_message_length': 2 ** 31 - 1,
      'grpc.max_send_message_length': 2 ** 31 - 1,
      // Reconnect quickly after a member restarts: the default backoff grows to two minutes.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      ...channelOptions,
    });
    this.base = this.makeBase();
  }

  /**
   * A new channel in place of one that stayed connecting past a call's deadline: grpc-js gives a connection
   * attempt no timeout of its own, so an attempt to an address that no longer answers (a restarted pod's old IP)
   * can hold the channel for minutes. The new channel resolves the name again. Only when the channel is not READY
   * (nothing lives on it then).
   */
  reset(): void {
    if (this.isReady()) return;
    this.base.close();
    this.stubs.clear();
    this.base = this.makeBase();
  }

  /** The stub of one service on this connection's channel. */
  stub(service: ServiceName): grpc.Client & Record<string, (...args: unknown[]) => unknown> {
    let s = this.stubs.get(service);
    if (!s) {
      const Ctor = loadClients()[service];
      s = new Ctor(this.target, grpc.credentials.createInsecure(), { channelOverride: this.base.getChannel() });
      this.stubs.set(service, s);
    }
    return s as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
  }

  /** Resolves when the channel is READY; rejects at the deadline. */
  waitForReady(deadline: Date): Promise<void> {
    return new Promise((resolve, reject) => this.base.waitForReady(deadline, (err) => (err ? reject(err) : resolve())));
  }

  /** True when the channel has a live transport. */
  isReady(): boolean {
    return this.base.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
  }

  /** The channel's state by name (IDLE, CONNECTING, READY, TRANSIENT_FAILURE, SHUTDOWN), for diagnostics. */
  state(): string {
    return grpc.connectivityState[this.base.getChannel().getConnectivityState(false)];
  }

  /** Starts connecting without waiting. */
  kick(): void {
    this.base.getChannel().getConnectivityState(true);
  }

  close(): void {
    for (const s of this.stubs.values()) s.close();
    this.base.close();
  }
}
