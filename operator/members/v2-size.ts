// The v2 data-size estimate: svc members publish the bytes of keys and values in their v2 store as the gauge
// svc_v2_store_data_bytes on /metrics (etcd 3.3-3.5 have no such metric). Chosen over reading
// GET /v2/keys/?recursive=true: the gauge is a few bytes instead of the whole store each reconcile, and it is
// there even when --enable-v2 is off (the store and its data outlive the flag; /v2/keys then answers 404).

/** The metric the estimate is read from. */
export const V2_SIZE_METRIC = 'svc_v2_store_data_bytes';

/** The v2 store's size from a /metrics body; undefined when the member does not publish it. */
export function parseV2DataBytes(metrics: string): number | undefined {
  const m = new RegExp(`^${V2_SIZE_METRIC}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(metrics);
  if (!m) return undefined;
  const v = Number(m[1]);
  return Number.isFinite(v) && v >= 0 ? v : undefined;
}
