// One MemberClient per TLS cluster (its CA and client certificate), one shared for plain-http clusters. A
// renewed Secret gives new material and so a new client; the old one's connections are closed.
import { MemberClient, type MemberClientOptions, type MemberTls } from '../members/index.js';
import { tlsKey } from './tls.js';

export class MemberClients {
  private readonly plain: MemberClient;
  private readonly byCluster = new Map<string, { key: string; client: MemberClient }>();

  constructor(private readonly opts: MemberClientOptions) {
    this.plain = new MemberClient(opts);
  }

  /** The client for cluster `cluster` ("namespace/name") with `tls` (undefined: plain http). */
  get(cluster: string, tls: MemberTls | undefined): MemberClient {
    if (!tls) {
      this.drop(cluster);
      return this.plain;
    }
    const key = tlsKey(tls);
    const cur = this.byCluster.get(cluster);
    if (cur?.key === key) return cur.client;
    cur?.client.close();
    const client = new MemberClient({ ...this.opts, tls });
    this.byCluster.set(cluster, { key, client });
    return client;
  }

  /** Forgets a cluster's client (deleted cluster, or no TLS any more). */
  drop(cluster: string): void {
    this.byCluster.get(cluster)?.client.close();
    this.byCluster.delete(cluster);
  }

  close(): void {
    for (const c of this.byCluster.values()) c.client.close();
    this.byCluster.clear();
    this.plain.close();
  }
}
