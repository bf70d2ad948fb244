// A minimal Kubernetes REST client (JSON over https, list+watch caches) for the node agent and tests.
// Why not @kubernetes/client-node: its 2.x line imports undici 8, which needs Node >= 22.19; on this project's
// Node 20 the import itself throws (undici/lib/interceptor/decompress.js: createZstdDecompress is undefined).
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { load } from 'js-yaml';

/** An error status from the apiserver (code = HTTP status; 404 not found, 409 conflict, 410 gone). */
export class KubeApiError extends Error {
  constructor(readonly code: number, message: string, readonly body: string) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** Where and how to reach an apiserver. */
export interface KubeConnection {
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: { server: string; 'certificate-authority'?: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user: { token?: string; 'client-certificate'?: string; 'client-certificate-data'?: string; 'client-key'?: string; 'client-key-data'?: string } }[];
}

/** Reads the current context of a kubeconfig (files or inline data, client certificates or a token). */
export function readKubeconfig(path: string): KubeConnection {
  const cfg = load(readFileSync(path, 'utf8')) as KubeconfigFile;
  const ctx = cfg.contexts?.find((c) => c.name === cfg['current-context']) ?? cfg.contexts?.[0];
  const cluster = cfg.clusters?.find((c) => c.name === ctx?.context.cluster)?.cluster;
  const user = cfg.users?.find((u) => u.name === ctx?.context.user)?.user ?? {};
  if (!cluster) throw new KubeApiError(0, `${path}: no cluster in the current context`, '');
  const file = (p: string | undefined, data: string | undefined): Buffer | undefined =>
    data ? Buffer.from(data, 'base64') : p ? readFileSync(resolve(dirname(path), p)) : undefined;
  return {
    server: cluster.server,
    ca: file(cluster['certificate-authority'], cluster['certificate-authority-data']),
    cert: file(user['client-certificate'], user['client-certificate-data']),
    key: file(user['client-key'], user['client-key-data']),
    token: user.token,
  };
}

/** Content types of PATCH. */
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** A Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; [k: string]: unknown };
}

/** JSON REST calls against one apiserver. */
export class KubeClient {
  private readonly agent: Agent;

  constructor(readonly conn: KubeConnection) {
    this.agent = new Agent({ keepAlive: true, ca: conn.ca, cert: conn.cert, key: conn.key });
  }

  /** A client for the current context of a kubeconfig file. */
  static fromKubeconfig(path: string): KubeClient {
    return new KubeClient(readKubeconfig(path));
  }

  /** One request; resolves the parsed JSON body; rejects with KubeApiError on a status >= 400. */
  request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    return new Promise((resolvePromise, reject) => {
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (this.conn.token) headers.Authorization = `Bearer ${this.conn.token}`;
      const payload = body === undefined ? undefined : JSON.stringify(body);
      if (payload !== undefined) {
        headers['Content-Type'] = contentType;
        // explicit: Node sends a DELETE body neither chunked nor with a length, which breaks the kept-alive connection
        headers['Content-Length'] = String(Buffer.byteLength(payload));
      }
      const req = request(this.conn.server + path, { method, headers, agent: this.agent, timeout: 30_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => { text += d; });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 400) {
            let message = text;
            try { message = (JSON.parse(text) as { message?: string }).message ?? text; } catch { /* not JSON */ }
            reject(new KubeApiError(status, `${method} ${path}: ${status} ${message}`, text));
            return;
          }
          try { resolvePromise((text ? JSON.parse(text) : {}) as T); } catch (e) { reject(e); }
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  get<T>(path: string): Promise<T> { return this.request<T>('GET', path); }
  create<T>(path: string, body: unknown): Promise<T> { return this.request<T>('POST', path, body); }
  patch<T>(path: string, body: unknown, type = MERGE_PATCH): Promise<T> { return this.request<T>('PATCH', path, body, type); }
  delete<T>(path: string, body?: unknown): Promise<T> { return this.request<T>('DELETE', path, body); }

  /**
   * Streams watch events of a collection from resourceVersion; resolves when the stream ends (the server closes
   * watches after a while) and rejects on errors. Returns a function that aborts it.
   */
  watch(path: string, resourceVersion: string, onEvent: (type: string, obj: KubeObject) => void): { done: Promise<void>; abort: () => void } {
    let abort = (): void => undefined;
    const done = new Promise<void>((resolveDone, reject) => {
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (this.conn.token) headers.Authorization = `Bearer ${this.conn.token}`;
      const sep = path.includes('?') ? '&' : '?';
      const url = `${this.conn.server}${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
      const req = request(url, { headers, agent: this.agent }, (res) => {
        if ((res.statusCode ?? 0) >= 400) {
          res.resume();
          reject(new KubeApiError(res.statusCode ?? 0, `watch ${path}: ${res.statusCode}`, ''));
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            const ev = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
            if (ev.type === 'ERROR') { req.destroy(); reject(new KubeApiError(ev.object.code ?? 500, `watch ${path}: error event`, line)); return; }
            onEvent(ev.type, ev.object);
          }
        });
        res.on('end', () => resolveDone());
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
      abort = () => { req.destroy(); resolveDone(); };
    });
    return { done, abort: () => abort() };
  }

  /** Closes kept-alive connections. */
  close(): void { this.agent.destroy(); }
}

/** A list+watch cache of one collection (e.g. /api/v1/pods), re-listing when the watch expires. */
export class Cache<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private stopped = false;
  private current: { abort: () => void } | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly client: KubeClient, readonly path: string, private readonly onChange: () => void, private readonly onError: (e: unknown) => void = () => undefined) {}

  private key(o: KubeObject): string { return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`; }

  /** Lists once (so the cache is filled when this resolves), then keeps watching. */
  async start(): Promise<void> {
    let rv = await this.relist();
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          const w = this.client.watch(this.path, rv, (type, obj) => {
            rv = obj.metadata?.resourceVersion ?? rv;
            if (type === 'BOOKMARK') return;
            if (type === 'DELETED') this.items.delete(this.key(obj));
            else this.items.set(this.key(obj), obj as T);
            this.onChange();
          });
          this.current = w;
          await w.done;
        } catch (e) {
          if (this.stopped) break;
          if (!(e instanceof KubeApiError && e.code === 410)) this.onError(e);
          await new Promise((r) => setTimeout(r, 500));
          try { rv = await this.relist(); } catch (e2) { this.onError(e2); }
        }
      }
    })();
  }

  private async relist(): Promise<string> {
    const list = await this.client.get<{ items: T[]; metadata: { resourceVersion: string } }>(this.path);
    this.items.clear();
    for (const o of list.items) this.items.set(this.key(o), o);
    this.onChange();
    return list.metadata.resourceVersion;
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    await this.loop;
  }

  /** All cached objects. */
  list(): T[] { return [...this.items.values()]; }

  /** One cached object. */
  get(name: string, namespace = ''): T | undefined { return this.items.get(`${namespace}/${name}`); }
}
