// Watches which member is the leader (svc_server_is_leader on /metrics) and counts changes.
import { MemberClient } from '../members/index.js';

/** Counts leader changes seen by polling every member's /metrics. */
export class LeaderTracker {
  /** Distinct leaders in the order seen (consecutive duplicates collapsed). */
  readonly history: string[] = [];
  private stopping = false;
  private loop?: Promise<void>;
  private readonly client = new MemberClient({ timeoutMs: 1000, attempts: 1 });

  /** `members()` gives the current name -> client URL map (it may change). */
  constructor(private readonly members: () => Promise<Map<string, string>>, private readonly intervalMs = 200) {}

  /** Starts polling. */
  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const urls = await this.members();
        const leaders = await Promise.all([...urls].map(async ([name, url]) => ((await this.client.isLeader(url).catch(() => false)) ? name : undefined)));
        const l = leaders.filter((x): x is string => x !== undefined);
        if (l.length === 1 && this.history.at(-1) !== l[0]) this.history.push(l[0]);
      } catch {
        // members unavailable for a moment
      }
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }

  /** Leader changes seen so far (the first leader seen is not a change). */
  get changes(): number {
    return Math.max(0, this.history.length - 1);
  }

  /** Stops polling. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    this.client.close();
  }
}
