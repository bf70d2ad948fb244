// Kubernetes resource quantities as the SvcCluster spec carries them (storage size, backup claim size).

/** Bytes of a Kubernetes quantity ("1Gi", "500M", "1073741824", or a number of bytes); undefined when unreadable. */
export function quantityBytes(q: string | number | undefined): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) && q >= 0 ? q : undefined;
  if (!q) return undefined;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E)?$/.exec(q.trim());
  if (!m) return undefined;
  const pow: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
  return Math.round(Number(m[1]) * (m[2] ? pow[m[2]] : 1));
}
