// Structure guards of issues 17 and 25: no import circle in server/ or operator/ (type-only imports included: a
// circle of types is a circle of design too), operator/'s folders importing only downward (the table below), and
// the environment read in cli/ folders only. All read the source tree.
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The text without comments (an import named in a comment is not one). */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The module specifiers a source imports or re-exports: static, side-effect and literal dynamic imports. */
function specifiers(text: string): string[] {
  const code = stripComments(text);
  const out = new Set<string>();
  for (const re of [/\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g]) {
    for (const m of code.matchAll(re)) out.add(m[1]);
  }
  return [...out];
}

/** Every circle a depth-first search meets, each as the path from its first file back to it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
  return found;
}

/** The import graph of the .ts files under `dir`, by path relative to the repository. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(dir)) {
    const targets = specifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
      .filter((t) => t.startsWith(dir + sep) && existsSync(t));
    graph.set(relative(ROOT, file), targets.map((t) => relative(ROOT, t)));
  }
  return graph;
}

/**
 * operator/'s parts and what each may import (besides itself, server/ and packages), lowest first: api is the
 * ground; the pure parts (members, backup's rules, the planner) stand on it; the runtimes on those; the engine
 * drives a runtime through its interface only; the controller and the CLI sit on top. A file belongs to the
 * longest part its path starts with.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'api': [],
  'members': ['api'],
  'backup': ['api'],
  'planner': ['api', 'backup'],
  'workload': ['members'],
  'runtime': ['api', 'members', 'backup', 'planner'],
  'runtime/local': ['runtime', 'api', 'members', 'backup', 'planner'],
  'runtime/kubernetes': ['runtime', 'api', 'members', 'backup', 'planner'],
  'orchestrator': ['runtime', 'api', 'members', 'backup', 'planner'],
  // the scheduled and on-demand backups beside the engine's pass, a part of the controller until backups are steps
  'controller': ['orchestrator', 'runtime', 'runtime/kubernetes', 'api', 'members', 'backup', 'planner'],
  'cli': ['controller', 'orchestrator', 'runtime', 'runtime/local', 'runtime/kubernetes', 'workload', 'api', 'members', 'backup', 'planner'],
};

/** The part of MAY_IMPORT a path relative to operator/ belongs to. */
function partOf(path: string): string | undefined {
  return Object.keys(MAY_IMPORT).filter((p) => path === p || path.startsWith(`${p}/`)).sort((a, b) => b.length - a.length)[0];
}

/** Imports between operator/'s parts that MAY_IMPORT does not allow ("from -> to"). */
function layeringViolations(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  const inOperator = (f: string) => relative(join(ROOT, 'operator'), join(ROOT, f)).split(sep).join('/');
  for (const [file, targets] of graph) {
    const from = partOf(inOperator(file));
    for (const t of targets) {
      const to = partOf(inOperator(t));
      if (from === undefined || to === undefined || (from !== to && !MAY_IMPORT[from].includes(to))) out.push(`${file} -> ${t}`);
    }
  }
  return out.sort();
}

describe('source structure', () => {
  it('the checker sees every kind of import and finds a circle', () => {
    const text = [
      "import type { A } from './a.js';",
      "import {\n  B,\n  C,\n} from '../b.js';",
      "export * from './c.js';",
      "export { D } from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "// import { G } from './g.js';",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(specifiers(text).sort()).to.deep.equal(['../b.js', './a.js', './c.js', './d.js', './e.js', './f.js', 'node:fs']);
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]);
    expect(cycles(graph)).to.deep.equal([['a', 'b', 'c', 'a']]);
    expect(cycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).to.deep.equal([]);
  });

  it('no import circle in server/', () => {
    const graph = importGraph(join(ROOT, 'server'));
    expect(graph.size).to.be.greaterThan(100);
    expect([...graph.values()].flat().length, 'edges').to.be.greaterThan(300);
    expect(cycles(graph)).to.deep.equal([]);
  });

  it('no import circle in operator/', () => {
    const graph = importGraph(join(ROOT, 'operator'));
    expect(graph.size).to.be.greaterThan(50);
    expect(cycles(graph)).to.deep.equal([]);
  });

  it('operator/ imports only downward, as MAY_IMPORT says; server/ imports nothing of operator/', () => {
    // the checker itself: a file outside every part, and an upward import, are reported
    const probe = new Map([
      ['operator/api/validate.ts', ['operator/backup/schedule.ts', 'operator/api/types.ts']],
      ['operator/runtime/kubernetes/backup-job.ts', ['operator/cli/backup.ts', 'operator/runtime/runtime.ts']],
      ['operator/controller/run.ts', ['operator/orchestrator/engine.ts', 'operator/backup/schedule.ts']],
      ['operator/orchestrator/engine.ts', ['operator/runtime/local/state.ts']],
      ['operator/stray.ts', ['operator/api/types.ts']],
    ]);
    expect(layeringViolations(probe)).to.deep.equal([
      'operator/api/validate.ts -> operator/backup/schedule.ts',
      'operator/orchestrator/engine.ts -> operator/runtime/local/state.ts',
      'operator/runtime/kubernetes/backup-job.ts -> operator/cli/backup.ts',
      'operator/stray.ts -> operator/api/types.ts',
    ]);
    // every part of the table is a folder or file of operator/
    for (const part of Object.keys(MAY_IMPORT)) expect(existsSync(join(ROOT, 'operator', part)), part).to.equal(true);

    const graph = importGraph(join(ROOT, 'operator'));
    expect([...graph.values()].flat().length, 'edges').to.be.greaterThan(150);
    expect(layeringViolations(graph)).to.deep.equal([]);
    const intoOperator = sources(join(ROOT, 'server')).filter((f) => specifiers(readFileSync(f, 'utf8')).some((s) => s.startsWith('.') && resolve(dirname(f), s).startsWith(join(ROOT, 'operator') + sep)));
    expect(intoOperator.map((f) => relative(ROOT, f))).to.deep.equal([]);
  });

  it('environment variables are read in cli/ folders only (server/, operator/)', () => {
    const offenders: string[] = [];
    for (const top of ['server', 'operator']) {
      for (const file of sources(join(ROOT, top))) {
        if (relative(ROOT, file).split(sep).includes('cli')) continue;
        stripComments(readFileSync(file, 'utf8')).split('\n').forEach((line, i) => {
          // handing the whole environment to a child process is not a read
          const rest = line.replace(/\.\.\.process\.env\b/g, '').replace(/env:\s*process\.env\b/g, '');
          if (/process\.env\b|process\[['"]env['"]\]/.test(rest)) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
