// Durations of the spec ("168h", "90m", "7d", "1h30m"): one grammar for the CRD pattern and the operator.

/** The CRD's pattern of a duration. */
export const DURATION_RE = /^([0-9]+(d|h|m|s))+$/;

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** Milliseconds of a duration, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/([0-9]+)(d|h|m|s)/g)) ms += Number(n) * UNIT_MS[unit];
  return ms;
}
