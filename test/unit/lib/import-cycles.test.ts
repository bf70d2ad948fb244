// No import circle in server/: every module's imports (type-only ones included, as madge counts them) form a
// graph without cycles, so each layer can be read, tested and replaced on its own.
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root: the first folder above this file that holds server/core/server.ts. */
function repoRoot(): string {
  let dir = here;
  for (;;) {
    try {
      if (statSync(join(dir, 'server', 'core', 'server.ts')).isFile()) return dir;
    } catch {
      /* keep walking */
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no server/core/server.ts above ${here}`);
    dir = up;
  }
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Module -> the modules under `root` it imports (relative specifiers, `.js` resolved to `.ts`). */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(root)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const deps = info.importedFiles
      .map((f) => f.fileName)
      .filter((s) => s.startsWith('.'))
      .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
      .filter((p) => p.startsWith(root));
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** Every cycle found by a depth-first walk (each reported once, from where it was entered). */
export function findCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (state.get(d) === 'open') cycles.push([...stack.slice(stack.indexOf(d)), d]);
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return cycles;
}

describe('server/ imports', () => {
  it('form no circle', () => {
    const root = join(repoRoot(), 'server');
    const cycles = findCycles(importGraph(root)).map((c) => c.map((p) => relative(root, p)).join(' -> '));
    expect(cycles).to.deep.equal([]);
  });

  it('the check finds a circle when there is one', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(findCycles(g)).to.deep.equal([['a', 'b', 'c', 'a']]);
  });
});
