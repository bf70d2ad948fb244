// Best-effort "<file>:<line>" of the code that called the logger, for zap's "caller" key. Capturing
// a stack costs microseconds, so the answer is remembered per message text: log messages are
// nearly always literals, one per call site.

type Fn = (...args: never[]) => unknown;
interface Site {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
}

const keepSites = (_e: Error, sites: Site[]): Site[] => sites;
const MAX_CACHED = 4096;

/** "<file>:<line>" of whoever called `below`, or "unknown". */
export function callSite(below: Fn): string {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = 1;
  // Structured frames skip stack-string formatting and any source-map lookup.
  Error.prepareStackTrace = keepSites as typeof Error.prepareStackTrace;
  const holder: { stack?: unknown } = {};
  try {
    Error.captureStackTrace(holder, below);
    const sites = holder.stack as Site[] | undefined;
    const site = sites?.[0];
    const path = site?.getFileName();
    if (!site || !path) return 'unknown';
    const file = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
    return `${file}:${site.getLineNumber() ?? 0}`;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

/** Remembers the call site of each message text (bounded, so dynamic messages cannot grow it forever). */
export class CallerCache {
  private readonly sites = new Map<string, string>();

  /** "<pkg>/<file>:<line>" for a record with this message, logged through `below`. */
  get(msg: string, below: Fn, pkg: string): string {
    let site = this.sites.get(msg);
    if (site === undefined) {
      site = callSite(below);
      if (this.sites.size < MAX_CACHED) this.sites.set(msg, site);
    }
    return `${pkg}/${site}`;
  }
}
