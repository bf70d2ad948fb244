// The recorded history of a chaos run: one entry per client operation, with invocation and completion
// times and what came back. Every operation touches exactly one key, so the checker can partition by key.

/** What a client asked for. `cas` is a one-key transaction: if value(key) == expected (null: absent) then put. */
export type KvInput =
  | { kind: 'put'; key: string; value: string }
  | { kind: 'get'; key: string }
  | { kind: 'delete'; key: string }
  | { kind: 'cas'; key: string; expected: string | null; value: string };

/** What the server answered (only for outcome 'ok'). */
export type KvOutput =
  | { kind: 'put' }
  | { kind: 'get'; value: string | null }
  | { kind: 'delete'; deleted: number }
  | { kind: 'cas'; succeeded: boolean };

/**
 * ok: the answer is known. failed: provably did not happen (the server said so before applying it).
 * unknown: a timeout or broken connection: it may or may not have happened, at any time after invocation.
 */
export type Outcome = 'ok' | 'failed' | 'unknown';

/** One operation of the history. Times are milliseconds (any common origin). */
export interface Operation {
  id: number;
  client: number;
  input: KvInput;
  call: number;
  /** Completion time; ignored for outcome 'unknown' (the effect may land any time later). */
  ret: number;
  outcome: Outcome;
  output?: KvOutput;
  /** Header revision of the answer, when ok. */
  revision?: number;
  /** The error text for failed/unknown outcomes. */
  error?: string;
  /** The member the call went to. */
  member?: string;
}

/** Collects operations from concurrent clients; times are relative to the recorder's creation. */
export class HistoryRecorder {
  readonly origin = performance.now();
  readonly ops: Operation[] = [];

  /** Milliseconds since the recorder was created. */
  now(): number {
    return performance.now() - this.origin;
  }

  /** Starts an operation; call the returned function with its outcome when it completes. */
  invoke(client: number, input: KvInput, member?: string): (outcome: Outcome, output?: KvOutput, extra?: { revision?: number; error?: string }) => Operation {
    const call = this.now();
    return (outcome, output, extra = {}) => {
      const op: Operation = { id: this.ops.length, client, input, call, ret: this.now(), outcome, output, member, ...extra };
      this.ops.push(op);
      return op;
    };
  }
}

/** A short human rendering of one operation: `put("k1","v") -> ok`. */
export function describeOp(op: Operation): string {
  const i = op.input;
  const q = (s: string | null) => (s === null ? 'absent' : JSON.stringify(s));
  let call: string;
  switch (i.kind) {
    case 'put':
      call = `put(${q(i.key)}, ${q(i.value)})`;
      break;
    case 'get':
      call = `get(${q(i.key)})`;
      break;
    case 'delete':
      call = `delete(${q(i.key)})`;
      break;
    case 'cas':
      call = `cas(${q(i.key)}, if ${q(i.expected)} then ${q(i.value)})`;
      break;
  }
  if (op.outcome === 'failed') return `${call} -> failed (${op.error ?? '?'})`;
  if (op.outcome === 'unknown' || !op.output) return `${call} -> unknown (${op.error ?? 'no answer'})`;
  const o = op.output;
  switch (o.kind) {
    case 'put':
      return `${call} -> ok`;
    case 'get':
      return `${call} -> ${q(o.value)}`;
    case 'delete':
      return `${call} -> deleted ${o.deleted}`;
    case 'cas':
      return `${call} -> ${o.succeeded ? 'succeeded' : 'not succeeded'}`;
  }
}
