// The sequential specification the checker holds histories against: one register per key (a string value,
// or null when absent). States are sets of possible values, so one model serves three needs: unknown
// outputs (an operation whose answer was lost may have either effect), an unknown initial state (when a
// window of the history is checked on its own) and optional operations (already applied before the window).

import type { KvInput, KvOutput } from './history.js';

/** Any value at all: the register's value is not known. */
export const ANY = Symbol('any');
export type RegisterValue = string | null | typeof ANY;

/** A set of possible register values (never empty for a valid state). */
export type RegisterState = readonly RegisterValue[];

/** The operation as the model sees it: output undefined means "any answer is acceptable". */
export interface ModelOp {
  input: KvInput;
  output?: KvOutput;
  /** May be skipped entirely (it may have taken effect before the checked window began). */
  optional?: boolean;
}

/** Successor values of one value, or [] when the op's output is impossible from it. */
function stepOne(v: RegisterValue, op: ModelOp): RegisterValue[] {
  const i = op.input;
  const o = op.output;
  switch (i.kind) {
    case 'put':
      return [i.value];
    case 'get':
      if (!o || o.kind !== 'get') return [v];
      if (v === ANY) return [o.value];
      return v === o.value ? [v] : [];
    case 'delete':
      if (!o || o.kind !== 'delete') return [null];
      if (v === ANY) return [null];
      return (v !== null) === (o.deleted > 0) ? [null] : [];
    case 'cas': {
      const can = v === ANY || v === i.expected;
      const cannot = v === ANY || v !== i.expected;
      if (!o || o.kind !== 'cas') {
        const out: RegisterValue[] = [];
        if (can) out.push(i.value);
        if (cannot) out.push(v);
        return out;
      }
      if (o.succeeded) return can ? [i.value] : [];
      return cannot ? [v] : [];
    }
  }
}

/** The state after `op`, or undefined when no value of `state` allows the op's recorded output. */
export function step(state: RegisterState, op: ModelOp): RegisterState | undefined {
  const out: RegisterValue[] = [];
  for (const v of state) {
    for (const n of stepOne(v, op)) if (!out.includes(n)) out.push(n);
    if (op.optional && !out.includes(v)) out.push(v);
  }
  if (out.includes(ANY)) return [ANY];
  return out.length ? out : undefined;
}

/** A canonical string for a state (cache key). */
export function stateKey(state: RegisterState): string {
  return state
    .map((v) => (v === ANY ? '*' : v === null ? '-' : `=${v}`))
    .sort()
    .join('\u0000');
}

/** Readable form of a state for reports. */
export function describeState(state: RegisterState): string {
  return state.map((v) => (v === ANY ? 'anything' : v === null ? 'absent' : JSON.stringify(v))).join(' or ');
}
