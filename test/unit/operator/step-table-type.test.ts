// A new step kind does not compile until the step table (operator/planner/steps.ts) has its row: a small program
// that adds a kind to the real Step union, with and without its row, through the TypeScript compiler.
import { expect } from 'chai';
import { join } from 'node:path';
import { ROOT, typeCheckSuite } from './type-check.js';

/** The program: Step plus a `defragmentMember` kind, the table of that union, with `row` appended to the real rows. */
function program(row: string): string {
  return [
    `import { STEPS, type StepTable } from ${JSON.stringify(join(ROOT, 'operator/planner/steps.js'))};`,
    `import type { Step } from ${JSON.stringify(join(ROOT, 'operator/planner/types.js'))};`,
    "type WithDefragment = Step | { kind: 'defragmentMember'; member: string };",
    `export const table: StepTable<WithDefragment> = { ...STEPS${row} };`,
    '',
  ].join('\n');
}

typeCheckSuite('operator: the step table is complete by its type', 'with-defragment.mts', (errorsOf) => {

  it('a kind without its row does not compile, naming the kind', () => {
    const errors = errorsOf(program(''));
    expect(errors).to.have.length(1);
    // (the type between is the whole table, printed by the compiler)
    expect(errors[0]).to.match(/^TS2741 with-defragment\.mts:4: Property 'defragmentMember' is missing in type '.*' but required in type 'StepTable<WithDefragment>'\.$/s);
  });

  it('the same kind with its row compiles clean, its functions typed for that kind', () => {
    const row = [
      ', defragmentMember: { mutating: true, scaling: true, settled: false, needs: [],',
      '  describe: (s) => `replace member ${s.member}`, eventReason: () => \'DefragmentMember\', statusReason: (s) => s.kind,',
      '  statusLine: (s) => s.kind, actionLine: (s) => `defragmentMember ${s.member}` }',
    ].join('\n');
    expect(errorsOf(program(row))).to.deep.equal([]);
  });
});
