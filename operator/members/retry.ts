// Retrying a call a few times with a pause between attempts.

/** Runs `fn` up to `attempts` times, pausing `delayMs` between attempts; rethrows the last error. */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 3, delayMs = 300): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (e) {
      last = e;
      if (i + 1 < attempts) await new Promise((r) => setTimeout(r, delayMs));
    }
  }
  throw last;
}
