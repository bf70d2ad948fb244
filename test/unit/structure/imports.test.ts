// Structure guards of issues 17, 25 and 37: no import circle in server/ or operator/ (type-only imports included: a
// circle of types is a circle of design too), each tree's parts importing only downward (the tables below, with a
// short allow-list), and the environment read in cli/ folders only. Imports are read by the TypeScript compiler
// (ts.preProcessFile), so no comment, string or line break hides one; each checker is shown failing first.
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The module specifiers a source imports or re-exports, as the compiler reads them: static, type-only, side-effect, dynamic. */
function specifiers(text: string): string[] {
  return [...new Set(ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName))];
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

/** The source file an import of `path` means: x.js is x.ts; x is x.ts or x/index.ts (a bundler's or an older resolution). */
function moduleFile(path: string): string {
  if (/\.[cm]?js$/.test(path)) return path.replace(/js$/, 'ts');
  return [`${path}.ts`, join(path, 'index.ts')].find((f) => existsSync(f)) ?? path;
}

/** The import graph of the .ts files under `root/top`, by path relative to `root` ('/'-separated). */
function importGraph(root: string, top: string): Map<string, string[]> {
  const dir = join(root, top);
  const rel = (f: string) => relative(root, f).split(sep).join('/');
  const graph = new Map<string, string[]>();
  for (const file of sources(dir)) {
    const targets = specifiers(readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => moduleFile(resolve(dirname(file), s)))
      .filter((t) => t.startsWith(dir + sep));
    graph.set(rel(file), targets.map(rel));
  }
  return graph;
}

/** What each part may import besides itself (and packages): a part of a tree is a folder or file under it. */
type Table = Readonly<Record<string, readonly string[]>>;

/** A table from floors, lowest first: a part imports only parts on floors below its own. */
function fromFloors(floors: ReadonlyArray<readonly string[]>): Table {
  return Object.fromEntries(floors.flatMap((floor, i) => floor.map((part) => [part, floors.slice(0, i).flat()])));
}

/**
 * server/'s parts, lowest first. The ground is the shape of the error classes; on it the wire contract and the
 * release table; consensus, storage and the peer transport stand on the logger and the config; mvcc and auth on
 * storage; membership (cluster) on those; the member's core on all of them; the API serves the core; member.ts
 * composes a member; the CLI, the embedding API and the library entry points (lib) start or hand it out.
 */
const SERVER = fromFloors([
  ['coded-error.ts'],
  ['wire', 'releases.ts'],
  ['log', 'client'],
  ['config', 'raft'],
  ['storage', 'transport'],
  ['mvcc', 'auth'],
  ['cluster'],
  ['core'],
  ['api'],
  ['member.ts'],
  ['cli', 'embed', 'lib'],
]);

/**
 * operator/'s parts and what each may import (besides itself, server/ and packages), lowest first: api is the
 * ground; the pure parts (members, backup's rules, the planner) stand on it; the runtimes on those; the engine
 * drives a runtime through its interface only; the controller and the CLI sit on top.
 */
const OPERATOR: Table = {
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

/** The upward arrows we live with, by parts, each with why. An entry no import needs any more fails the test. */
const ALLOWED_UPWARD: Readonly<Record<string, string>> = {
  // the reference's error codes and the log's request types are the core's; auth throws and reads them
  'server/auth -> server/core': 'auth/store.ts and tokens.ts throw core/errors.ts; txn-keys.ts reads core/requests.ts types',
  // restoring a snapshot and converting a reference data dir write what the core's log and applier read back
  'server/cluster -> server/core': 'membership.ts throws core/errors.ts; restore.ts and convert-reference.ts write core/requests.ts, applier.ts and v2store.ts state',
};

/** The part of `table` a path relative to its tree belongs to: the longest that it starts with. */
function partOf(table: Table, path: string): string | undefined {
  return Object.keys(table).filter((p) => path === p || path.startsWith(`${p}/`)).sort((a, b) => b.length - a.length)[0];
}

/** Imports inside `top` that its table does not allow, as "top/from -> top/to: file -> file" (no part: "?"). */
function upwardArrows(graph: Map<string, string[]>, top: string, table: Table): string[] {
  const part = (f: string) => partOf(table, f.slice(top.length + 1));
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = part(file);
    for (const t of targets) {
      const to = part(t);
      if (from === undefined || to === undefined || (from !== to && !table[from].includes(to))) out.push(`${top}/${from ?? '?'} -> ${top}/${to ?? '?'}: ${file} -> ${t}`);
    }
  }
  return out.sort();
}

/** The arrows the allow-list does not name. */
const notAllowed = (arrows: string[]) => arrows.filter((a) => !(a.split(':')[0] in ALLOWED_UPWARD));

/** A tree of files on a temp dir: path -> text. */
function tempTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-structure-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('source structure', () => {
  it('the checker sees every kind of import, and no comment or string hides or invents one', () => {
    const text = [
      '// the users: api/v3/*.ts, which once hid every import below from a comment stripper',
      "import type { A } from './a.js';",
      "import {\n  B,\n  C,\n} from '../b.js';",
      "export * from './c.js';",
      "export type { D } from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "// import { G } from './g.js';",
      "/* import './h.js'; */",
      "const i = `import x from './i.js'`;",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(specifiers(text).sort()).to.deep.equal(['../b.js', './a.js', './c.js', './d.js', './e.js', './f.js', 'node:fs']);
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]))).to.deep.equal([['a', 'b', 'c', 'a']]);
    expect(cycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).to.deep.equal([]);
  });

  it('the guard fails on a circle and on an upward arrow made on purpose (a tree on disk)', () => {
    // mvcc imports the core behind a comment that opens "/*", and the core imports mvcc by a type only
    const root = tempTree({
      'server/mvcc/kvstore.ts': "// see core/*.ts\nimport type { Observers } from '../core/interfaces.js';\nexport class MvccStore {}\n",
      'server/core/interfaces.ts': "import type { MvccStore } from '../mvcc/kvstore.js';\nexport interface Observers { s?: MvccStore }\n",
      'server/core/server.ts': "import './interfaces.js';\n",
      // without an extension, as the circle made by hand in issue 37 was
      'server/mvcc/lessor.ts': "import '../core/server';\n",
    });
    try {
      const graph = importGraph(root, 'server');
      expect(cycles(graph)).to.deep.equal([['server/core/interfaces.ts', 'server/mvcc/kvstore.ts', 'server/core/interfaces.ts']]);
      expect(notAllowed(upwardArrows(graph, 'server', SERVER))).to.deep.equal([
        'server/mvcc -> server/core: server/mvcc/kvstore.ts -> server/core/interfaces.ts',
        'server/mvcc -> server/core: server/mvcc/lessor.ts -> server/core/server.ts',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the tables: a file outside every part, and an import against the table, are reported', () => {
    const probe = new Map([
      ['operator/api/validate.ts', ['operator/backup/schedule.ts', 'operator/api/types.ts']],
      ['operator/runtime/kubernetes/backup-job.ts', ['operator/cli/backup.ts', 'operator/runtime/runtime.ts']],
      ['operator/controller/run.ts', ['operator/orchestrator/engine.ts', 'operator/backup/schedule.ts']],
      ['operator/orchestrator/engine.ts', ['operator/runtime/local/state.ts']],
      ['operator/stray.ts', ['operator/api/types.ts']],
    ]);
    expect(upwardArrows(probe, 'operator', OPERATOR)).to.deep.equal([
      'operator/? -> operator/api: operator/stray.ts -> operator/api/types.ts',
      'operator/api -> operator/backup: operator/api/validate.ts -> operator/backup/schedule.ts',
      'operator/orchestrator -> operator/runtime/local: operator/orchestrator/engine.ts -> operator/runtime/local/state.ts',
      'operator/runtime/kubernetes -> operator/cli: operator/runtime/kubernetes/backup-job.ts -> operator/cli/backup.ts',
    ]);
    // parts on one floor do not import each other
    expect(upwardArrows(new Map([['server/mvcc/a.ts', ['server/auth/b.ts']]]), 'server', SERVER)).to.have.length(1);
    // every part of the tables is a folder or file of its tree
    for (const [top, table] of [['server', SERVER], ['operator', OPERATOR]] as const) {
      for (const part of Object.keys(table)) expect(readdirSync(join(ROOT, top, dirname(part))), `${top}/${part}`).to.include(part.split('/').pop());
    }
  });

  for (const [top, table, files, edges] of [['server', SERVER, 100, 300], ['operator', OPERATOR, 50, 150]] as const) {
    it(`no import circle in ${top}/`, () => {
      const graph = importGraph(ROOT, top);
      expect(graph.size).to.be.greaterThan(files);
      expect([...graph.values()].flat().length, 'edges').to.be.greaterThan(edges);
      expect(cycles(graph).map((c) => c.join(' -> '))).to.deep.equal([]);
    });

    it(`${top}/ imports only downward, but for the allow-list`, () => {
      expect(notAllowed(upwardArrows(importGraph(ROOT, top), top, table))).to.deep.equal([]);
    });
  }

  it('the allow-list names only upward arrows that are there, two at most', () => {
    const arrows = [...upwardArrows(importGraph(ROOT, 'server'), 'server', SERVER), ...upwardArrows(importGraph(ROOT, 'operator'), 'operator', OPERATOR)];
    const used = new Set(arrows.map((a) => a.split(':')[0]));
    expect(Object.keys(ALLOWED_UPWARD).filter((k) => !used.has(k)), 'entries no import needs').to.deep.equal([]);
    expect(used.size).to.be.at.most(2);
  });

  it('server/ imports nothing of operator/', () => {
    const intoOperator = sources(join(ROOT, 'server')).filter((f) => specifiers(readFileSync(f, 'utf8')).some((s) => s.startsWith('.') && resolve(dirname(f), s).startsWith(join(ROOT, 'operator') + sep)));
    expect(intoOperator.map((f) => relative(ROOT, f))).to.deep.equal([]);
  });

  it('environment variables are read in cli/ folders only (server/, operator/)', () => {
    const offenders: string[] = [];
    for (const top of ['server', 'operator']) {
      for (const file of sources(join(ROOT, top))) {
        if (relative(ROOT, file).split(sep).includes('cli')) continue;
        const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
        const visit = (node: ts.Node): void => {
          const isEnv = (ts.isPropertyAccessExpression(node) && node.name.text === 'env') || (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression) && node.argumentExpression.text === 'env');
          if (isEnv && ts.isIdentifier(node.expression) && node.expression.text === 'process') {
            const p = node.parent;
            // handing the whole environment to a child process is not a read
            const handedOn = ts.isSpreadAssignment(p) || ts.isSpreadElement(p) || (ts.isPropertyAssignment(p) && p.name.getText() === 'env');
            if (!handedOn) offenders.push(`${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.parent.getText()}`);
          }
          ts.forEachChild(node, visit);
        };
        visit(source);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
