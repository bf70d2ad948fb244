// Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time and by inclusive time,
// naming each as function (file:line). Lines of our compiled files are mapped back to the TypeScript
// source through the .js.map next to them, so the report points at what to edit.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, relative, resolve } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A span of CLOCK_MONOTONIC time in microseconds (process.hrtime.bigint() / 1000n), as the profile stamps samples. */
export interface TimeWindow {
  startUs: number;
  endUs: number;
}

/** The current CLOCK_MONOTONIC time in microseconds, comparable with a V8 profile's sample times. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** One function's share of a profile. */
export interface HotFunction {
  /** function (file:line). */
  name: string;
  selfMs: number;
  selfPct: number;
  totalMs: number;
  totalPct: number;
}

export interface ProfileSummary {
  durationMs: number;
  /** Samples counted (those inside the windows, when windows were given). */
  samples: number;
  /** Share of samples spent idle (waiting on I/O). */
  idlePct: number;
  gcPct: number;
  bySelf: HotFunction[];
  byTotal: HotFunction[];
  /** Self time grouped by where the code lives (our server folders, a dependency, node internals). */
  byArea: Array<{ area: string; selfPct: number }>;
  /**
   * Self time charged to the nearest caller that is ours or a dependency: node internals and native code count
   * for the code that called them (the HTTP/2 writes grpc-js makes count for grpc-js). What no such code called
   * (work started by the event loop itself, e.g. reading an HTTP/2 frame) stays with its node module.
   */
  byCaller: Array<{ area: string; selfPct: number }>;
}

/**
 * Summarises a .cpuprofile file; `root` is the folder paths are shown relative to. With `windows`, only
 * samples taken inside them count (e.g. the measured load, not start-up and shutdown).
 */
export function summariseProfile(file: string, root: string, top = 20, windows?: readonly TimeWindow[]): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  if (windows && windows.length && prof.samples && prof.timeDeltas) {
    const hits = new Map<number, number>();
    let t = prof.startTime;
    for (let i = 0; i < prof.samples.length; i++) {
      t += prof.timeDeltas[i] ?? 0;
      if (windows.some((w) => t >= w.startUs && t <= w.endUs)) hits.set(prof.samples[i], (hits.get(prof.samples[i]) ?? 0) + 1);
    }
    for (const n of prof.nodes) n.hitCount = hits.get(n.id) ?? 0;
  }
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const totalHits = prof.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
  const span = windows && windows.length ? windows.reduce((s, w) => s + (w.endUs - w.startUs), 0) : prof.endTime - prof.startTime;
  const durationMs = span / 1000;
  const msPerHit = durationMs / totalHits;
  const names = new Map<number, string>();
  const label = (n: ProfileNode) => {
    let s = names.get(n.id);
    if (s === undefined) {
      s = describe(n.callFrame, root);
      names.set(n.id, s);
    }
    return s;
  };

  const self = new Map<string, number>();
  const area = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  for (const n of prof.nodes) {
    const h = n.hitCount ?? 0;
    if (!h) continue;
    const fn = n.callFrame.functionName;
    if (fn === '(idle)') idle += h;
    if (fn === '(garbage collector)') gc += h;
    self.set(label(n), (self.get(label(n)) ?? 0) + h);
    const a = areaOf(n.callFrame, root);
    area.set(a, (area.get(a) ?? 0) + h);
  }

  // Inclusive hits: a function counts every sample below it once, even when it recurses.
  const total = new Map<string, number>();
  const root0 = prof.nodes[0];
  const walk = (node: ProfileNode, onStack: Map<string, number>): number => {
    const name = label(node);
    onStack.set(name, (onStack.get(name) ?? 0) + 1);
    let sum = node.hitCount ?? 0;
    for (const c of node.children ?? []) {
      const child = byId.get(c);
      if (child) sum += walk(child, onStack);
    }
    const depth = onStack.get(name)! - 1;
    if (depth === 0) {
      onStack.delete(name);
      total.set(name, (total.get(name) ?? 0) + sum);
    } else {
      onStack.set(name, depth);
    }
    return sum;
  };
  walk(root0, new Map());

  const caller = new Map<string, number>();
  const charge = (node: ProfileNode, owner: string | undefined) => {
    const a = areaOf(node.callFrame, root);
    // node internals and native code work for their caller; (root) owns nothing; the rest keeps its own name
    const forCaller = a.startsWith('node ') || a === '(native)';
    const own = a === '(root)' ? undefined : forCaller ? owner : a;
    const h = node.hitCount ?? 0;
    if (h) {
      const k = forCaller ? (owner ?? a) : a;
      caller.set(k, (caller.get(k) ?? 0) + h);
    }
    for (const c of node.children ?? []) {
      const child = byId.get(c);
      if (child) charge(child, own);
    }
  };
  charge(root0, undefined);

  const row = (name: string): HotFunction => ({
    name,
    selfMs: (self.get(name) ?? 0) * msPerHit,
    selfPct: ((self.get(name) ?? 0) / totalHits) * 100,
    totalMs: (total.get(name) ?? 0) * msPerHit,
    totalPct: ((total.get(name) ?? 0) / totalHits) * 100,
  });
  const skip = (n: string) => n.startsWith('(root)') || n.startsWith('(idle)') || n.startsWith('(program)');
  return {
    durationMs,
    samples: totalHits,
    idlePct: (idle / totalHits) * 100,
    gcPct: (gc / totalHits) * 100,
    bySelf: [...self.keys()].filter((n) => !skip(n)).map(row).sort((a, b) => b.selfMs - a.selfMs).slice(0, top),
    byTotal: [...total.keys()].filter((n) => !skip(n)).map(row).sort((a, b) => b.totalMs - a.totalMs).slice(0, top),
    byArea: shares(area, totalHits),
    byCaller: shares(caller, totalHits),
  };
}

function shares(hits: Map<string, number>, totalHits: number): Array<{ area: string; selfPct: number }> {
  return [...hits.entries()].map(([a, h]) => ({ area: a, selfPct: (h / totalHits) * 100 })).sort((x, y) => y.selfPct - x.selfPct);
}

/** The summary as text lines for a report; shares are of all samples (idle included). */
export function formatProfile(s: ProfileSummary, top = 15): string {
  const pct = (v: number) => `${v.toFixed(1).padStart(5)}%`;
  const out = [
    `profile ${(s.durationMs / 1000).toFixed(1)} s, ${s.samples} samples: idle ${s.idlePct.toFixed(1)}%, GC ${s.gcPct.toFixed(1)}%`,
    'self time by area:',
    ...s.byArea.slice(0, 12).map((a) => `  ${pct(a.selfPct)}  ${a.area}`),
    'self time charged to the nearest caller of ours or a dependency (node internals and native code count for their caller):',
    ...s.byCaller.slice(0, 12).map((a) => `  ${pct(a.selfPct)}  ${a.area}`),
    'hottest functions (self):',
    ...s.bySelf.slice(0, top).map((f) => `  ${pct(f.selfPct)}  ${f.name}`),
    'hottest functions (inclusive):',
    ...s.byTotal.slice(0, top).map((f) => `  ${pct(f.totalPct)}  ${f.name}`),
  ];
  return out.join('\n');
}

const maps = new Map<string, SourceMap | null>();

function sourceMapFor(path: string): SourceMap | null {
  let m = maps.get(path);
  if (m === undefined) {
    m = null;
    const mapFile = `${path}.map`;
    if (existsSync(mapFile)) {
      try {
        m = new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')));
      } catch {
        m = null;
      }
    }
    maps.set(path, m);
  }
  return m;
}

/** function (file:line), with compiled files mapped to their .ts source when a map is there. */
function describe(cf: CallFrame, root: string): string {
  const fn = cf.functionName || '(anonymous)';
  if (!cf.url) return fn;
  let where = cf.url;
  let line = cf.lineNumber + 1;
  if (where.startsWith('file://')) {
    const path = fileURLToPath(where);
    where = relative(root, path);
    const sm = path.includes('/node_modules/') ? null : sourceMapFor(path);
    if (sm) {
      const e = sm.findEntry(cf.lineNumber, cf.columnNumber) as { originalSource?: string; originalLine?: number };
      if (e && e.originalSource) {
        const src = e.originalSource.startsWith('file://') ? fileURLToPath(e.originalSource) : e.originalSource;
        where = relative(root, resolve(dirname(path), src));
        line = (e.originalLine ?? 0) + 1;
      }
    }
  }
  return `${fn} (${where}:${line})`;
}

/** A coarse bucket for where a frame's code lives. */
function areaOf(cf: CallFrame, root: string): string {
  const fn = cf.functionName;
  if (!cf.url) return fn.startsWith('(') ? fn : '(native)';
  // node:internal/http2/core -> "node http2": which part of node (HTTP/2, streams, timers) did the work
  if (cf.url.startsWith('node:')) return `node ${cf.url.replace(/^node:(internal\/)?/, '').split('/')[0]}`;
  const p = cf.url.startsWith('file://') ? relative(root, fileURLToPath(cf.url)) : cf.url;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(p);
  if (nm) return `dependency ${nm[1]}`;
  const ours = /(?:^|\/)(server\/[^/]+)\//.exec(p);
  if (ours) return ours[1];
  return p;
}
