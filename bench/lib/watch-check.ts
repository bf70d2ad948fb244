// The watch fan-out bench's verdict: did every watcher get every event of the writer exactly once, in revision
// order? Pure (no processes), so test/unit/bench checks it directly.

/** Totals over all watchers; `ok` only when nothing is missing, duplicated, out of order or unexpected. */
export interface DeliveryCheck {
  ok: boolean;
  watchers: number;
  /** Events each watcher must get (the writer's acknowledged puts). */
  expectedPerWatcher: number;
  /** Events received, over all watchers. */
  delivered: number;
  /** Expected events a watcher never got. */
  missing: number;
  /** Events a watcher got more than once (second and later copies). */
  duplicated: number;
  /** First copies that arrived after an event of a higher revision. */
  outOfOrder: number;
  /** Events whose revision is none of the writer's acknowledged puts (after a writer error this can be a put that
   * committed but whose answer was lost; otherwise it is a bug). */
  unexpected: number;
  /** Watchers with at least one problem. */
  failingWatchers: number;
  /** The first problem found, for the report. */
  firstProblem?: string;
}

/**
 * Checks each watcher's received revisions (in arrival order) against the writer's acknowledged revisions (any
 * order, distinct). Exactly once: each expected revision appears once; in order: each first copy has a higher
 * revision than every event before it.
 */
export function checkDeliveries(expected: readonly number[], perWatcher: ReadonlyArray<ArrayLike<number>>): DeliveryCheck {
  const index = new Map<number, number>();
  for (const rev of expected) index.set(rev, index.size);
  const r: DeliveryCheck = {
    ok: true,
    watchers: perWatcher.length,
    expectedPerWatcher: index.size,
    delivered: 0,
    missing: 0,
    duplicated: 0,
    outOfOrder: 0,
    unexpected: 0,
    failingWatchers: 0,
  };
  const seen = new Uint32Array(index.size);
  perWatcher.forEach((revs, w) => {
    seen.fill(0);
    let highest = -Infinity;
    let problems = 0;
    const problem = (what: string) => {
      problems++;
      r.firstProblem ??= `watcher ${w}: ${what}`;
    };
    for (let i = 0; i < revs.length; i++) {
      const rev = revs[i];
      r.delivered++;
      const at = index.get(rev);
      if (at === undefined) {
        r.unexpected++;
        problem(`event at revision ${rev}, which no acknowledged put wrote`);
      } else if (++seen[at] > 1) {
        r.duplicated++;
        problem(`revision ${rev} delivered ${seen[at]} times`);
      } else if (rev < highest) {
        r.outOfOrder++;
        problem(`revision ${rev} delivered after revision ${highest}`);
      }
      if (rev > highest) highest = rev;
    }
    let missing = 0;
    for (let i = 0; i < seen.length; i++) if (seen[i] === 0) missing++;
    if (missing) {
      r.missing += missing;
      problem(`${missing} of ${seen.length} events never delivered`);
    }
    if (problems) r.failingWatchers++;
  });
  r.ok = r.failingWatchers === 0;
  return r;
}

/** A short verdict for the table: "ok" or what went wrong. */
export function deliveryVerdict(c: DeliveryCheck): string {
  if (c.ok) return 'ok';
  const parts: string[] = [];
  if (c.missing) parts.push(`${c.missing} missing`);
  if (c.duplicated) parts.push(`${c.duplicated} duplicated`);
  if (c.outOfOrder) parts.push(`${c.outOfOrder} out of order`);
  if (c.unexpected) parts.push(`${c.unexpected} unexpected`);
  return `FAILED (${c.failingWatchers} watchers: ${parts.join(', ')})`;
}
