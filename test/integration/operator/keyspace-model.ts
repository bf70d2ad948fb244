// The model a backup test keeps of its writer's answers: every put and delete with the revision it made, so that the
// keyspace at any revision R is known without asking the cluster (a restore to R must hold exactly it).

export class KeyspaceModel {
  private readonly ops: Array<{ rev: number; key: string; value?: string }> = [];

  /** A put (`value`) or a delete (no value) that made revision `rev`. */
  record(rev: number, key: string, value?: string): void {
    this.ops.push({ rev, key, value });
  }

  /** The keyspace at revision `rev`, as sorted `key=value` lines. */
  keyspace(rev: number): string[] {
    const m = new Map<string, string>();
    for (const o of this.ops) {
      if (o.rev > rev) continue;
      if (o.value === undefined) m.delete(o.key);
      else m.set(o.key, o.value);
    }
    return [...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  }

  /** The revision of the newest write recorded (0: none). */
  get last(): number {
    return this.ops.at(-1)?.rev ?? 0;
  }
}
