// The compiler's verdict on a small program that imports the source tree: for tests that prove a rule is enforced by
// the types (a step kind without its row, a runtime without a capability it claims does not compile).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository's root (the tests run from dist/test/unit/operator). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The errors of `text` written as `dir/name` (.mts: an ES module wherever it lies), "TS<code> <file>:<line>: <message>". */
function typeErrors(dir: string, name: string, text: string): string[] {
  const file = join(dir, name);
  writeFileSync(file, text);
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const p = ts.createProgram([file], { ...options, noEmit: true, declaration: false, rootDir: undefined, outDir: undefined });
  return ts.getPreEmitDiagnostics(p).map((d) => {
    const where = d.file && d.start !== undefined ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return `TS${d.code} ${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

/**
 * A suite of tests that compile small programs: the compiler's time, a scratch folder (made before, removed after),
 * and `errorsOf(text)`, the errors of `text` written there as `name`.
 */
export function typeCheckSuite(title: string, name: string, tests: (errorsOf: (text: string) => string[]) => void): void {
  describe(title, function () {
    this.timeout(60_000);
    let dir = '';
    before(() => { dir = mkdtempSync(join(tmpdir(), 'type-check-')); });
    after(() => rmSync(dir, { recursive: true, force: true }));
    tests((text) => typeErrors(dir, name, text));
  });
}
