// A change as watchers see it.
import type { KeyValue } from './kv.js';
import type { Revision } from './revision.js';

export type EventType = 'PUT' | 'DELETE';

/** One change of one key; a DELETE's kv carries the key and the deleting revision only. */
export interface MvccEvent {
  type: EventType;
  kv: KeyValue;
  /** The key's previous state, when known. */
  prevKv?: KeyValue;
  /**
   * A PUT over an existing key whose previous state nobody asked for at the write: the revision that state is
   * stored under, read only for a watcher that wants prev_kv (MvccStore.prevKvOf).
   */
  prevRev?: Revision;
}

/** A PUT that created the key (version 1): it has no previous state. */
export function isCreateEvent(ev: MvccEvent): boolean {
  return ev.type === 'PUT' && ev.kv.version === 1;
}
