// The one interface every kind of destination offers: list, put, get and delete objects by key. Full snapshots,
// their manifests, restore drills and delta segments all go through it (index.ts), never through a client library.

/** Why a destination call failed, as a person acts on it. */
export type DestinationCause = 'Unreachable' | 'CredentialsRefused' | 'NoCredentials' | 'BucketMissing' | 'ObjectMissing' | 'ObjectCorrupt' | 'Failed';

/** Raised by destinations: names the destination, the cause, and the way out. */
export class DestinationError extends Error {
  constructor(readonly destination: string, readonly reason: DestinationCause, message: string, options?: { cause?: unknown }) {
    super(`destination ${destination}: ${message}`, options);
    this.name = 'DestinationError';
  }
}

/** Objects of one destination; keys are full keys (the destination's prefix included by the caller). */
export interface ObjectStore {
  /** How messages name it: `"<name>" (s3://<bucket>/<prefix> at <endpoint>)`. */
  readonly label: string;
  /** Every key that starts with `prefix`, in key order. */
  list(prefix: string): Promise<string[]>;
  /** Writes a file (streamed) to `key`. */
  putFile(key: string, file: string): Promise<void>;
  /** Writes bytes to `key`. */
  put(key: string, body: Buffer, contentType?: string): Promise<void>;
  /** Reads `key` whole (small objects: manifests). */
  get(key: string): Promise<Buffer>;
  /** Streams `key` into `file`. */
  getFile(key: string, file: string): Promise<void>;
  /** Removes `key` (no error when it is gone already). */
  delete(key: string): Promise<void>;
  /** Ends its connections. */
  close(): void;
}
