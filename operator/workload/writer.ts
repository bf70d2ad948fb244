// A background writer: puts keys one after another through the client library (with failover), retrying
// a failed put until it succeeds or its retry budget runs out. Used by the demo, the tests and the bench to
// show that an upgrade loses no writes.
import { Client } from '../../server/client/index.js';

export interface WriterStats {
  /** Puts begun. */
  attempted: number;
  /** Puts that succeeded (possibly after retries). */
  succeeded: number;
  /** Puts that failed even after every retry. */
  failed: number;
  /** Retries made. */
  retries: number;
  /** Keys written successfully, with their values. */
  written: Map<string, string>;
  /** Last errors (at most 5). */
  errors: string[];
}

export interface WriterOptions {
  endpoints: string[];
  /** Key prefix. Default "writer/". */
  prefix?: string;
  /** Pause between puts. Default 20 ms. */
  intervalMs?: number;
  /** How long one put may keep retrying. Default 15 s. */
  retryBudgetMs?: number;
  /** Client certificate and CA for https endpoints. */
  tls?: { ca: Buffer; cert: Buffer; key: Buffer };
}

/** A running writer; stop() ends it and returns the stats. */
export class BackgroundWriter {
  readonly stats: WriterStats = { attempted: 0, succeeded: 0, failed: 0, retries: 0, written: new Map(), errors: [] };
  private stopping = false;
  private loop?: Promise<void>;
  private client?: Client;

  constructor(private readonly opts: WriterOptions) {}

  /** Starts writing. */
  async start(): Promise<void> {
    this.client = await Client.connect({ endpoints: this.opts.endpoints, commandTimeoutMs: 4000, ...(this.opts.tls ? { tls: this.opts.tls } : {}) });
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const prefix = this.opts.prefix ?? 'writer/';
    const interval = this.opts.intervalMs ?? 20;
    const budget = this.opts.retryBudgetMs ?? 15_000;
    for (let i = 0; !this.stopping; i++) {
      const key = `${prefix}${String(i).padStart(6, '0')}`;
      const value = `v${i}`;
      this.stats.attempted++;
      const until = Date.now() + budget;
      for (;;) {
        try {
          await this.client!.put(key, value);
          this.stats.succeeded++;
          this.stats.written.set(key, value);
          break;
        } catch (e) {
          // with the channels' states: a put that fails everywhere says which members it could reach
          const msg = `${(e as Error).message} [${this.client!.endpointStates().join(', ')}] at ${new Date().toISOString()}`;
          if (this.stats.errors.length < 5 || Date.now() > until) this.stats.errors.push(msg);
          if (Date.now() > until) {
            this.stats.failed++;
            break;
          }
          this.stats.retries++;
          // Putting the same value again is harmless, so any failure may be retried.
          this.client!.failover();
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await new Promise((r) => setTimeout(r, interval));
    }
  }

  /** Stops after the put under way and returns the stats. */
  async stop(): Promise<WriterStats> {
    this.stopping = true;
    await this.loop;
    this.client?.close();
    return this.stats;
  }
}
