// Whether the member is stopping or stopped: owned by the server (the wiring), read by every component.
export interface Lifecycle {
  /** stop() was called: no new work is taken. */
  readonly stopping: boolean;
  /** The consensus loop and timers are stopped. */
  readonly stopped: boolean;
}

export class MemberLifecycle implements Lifecycle {
  stopping = false;
  stopped = false;

  /** Stopping or stopped. */
  get ending(): boolean {
    return this.stopping || this.stopped;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A Go-style duration string ("2.55ms", "1.2s"), as the reference prints durations. */
export function formatDuration(ms: number): string {
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  return `${+(ms / 1000).toFixed(3)}s`;
}
