// Public entry of the client library (`svc/client`).
export { Client, type ClientOptions } from './client.js';
export { ClientError, Status, isConnCanceled, provablyNotApplied, retryableRead } from './errors.js';
export { Watcher, ERR_COMPACTED } from './watch.js';
export { KeepAlive } from './keepalive.js';
export { saveSnapshot, verifiedSnapshot, type SaveProgress } from './snapshot.js';
export { prefixEnd } from './keys.js';
export { parseEndpoint, type TlsOptions } from './connection.js';
export type * from './types.js';
