// A runtime that says it has a capability implements that capability's interface, or it does not compile; and the
// planner never plans a step whose row in the step table needs a capability the runtime lacks.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { withDefaults } from '../../../operator/api/validate.js';
import { plan } from '../../../operator/planner/plan.js';
import type { ObservedCluster } from '../../../operator/planner/types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** A runtime class with capabilities `caps` and the extra members `body`, over the real interfaces. */
function program(caps: string, body: string): string {
  return [
    `import type { RuntimeWith } from ${JSON.stringify(join(ROOT, 'operator/runtime/runtime.js'))};`,
    `import { memoryRecords } from ${JSON.stringify(join(ROOT, 'operator/runtime/memory-records.js'))};`,
    `const CAPS = [${caps}] as const;`,
    'export class Tiny implements RuntimeWith<(typeof CAPS)[number]> {',
    "  readonly kind = 'tiny';",
    '  readonly capabilities = CAPS;',
    '  readonly records = memoryRecords();',
    '  async members() { return []; }',
    '  async createCluster() {}',
    '  async restartMember() {}',
    "  snapshotLocation() { return ''; }",
    '  async pruneSnapshots() { return []; }',
    '  async v2DataBytes() { return undefined; }',
    body,
    '}',
    '',
  ].join('\n');
}

function typeErrors(dir: string, text: string): string[] {
  const file = join(dir, 'tiny.mts');
  writeFileSync(file, text);
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const p = ts.createProgram([file], { ...options, noEmit: true, declaration: false, rootDir: undefined, outDir: undefined });
  return ts.getPreEmitDiagnostics(p).map((d) => `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('operator: runtime capabilities', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'capability-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a runtime that claims recovery without forceNewCluster does not compile, naming the method', () => {
    const errors = typeErrors(dir, program("'recovery'", "  async takeRecoverySnapshot() { return { streamTo: '/x' }; }"));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^TS2420 .*Tiny.*forceNewCluster/s);
  });

  it('the same runtime with the method compiles, and one that claims nothing needs none', () => {
    expect(typeErrors(dir, program("'recovery'", "  async takeRecoverySnapshot() { return { streamTo: '/x' }; }\n  async forceNewCluster() {}"))).to.deep.equal([]);
    expect(typeErrors(dir, program('', ''))).to.deep.equal([]);
  });

  it('the planner does not plan a step the runtime cannot take: blocked, naming the capability, nothing changed', () => {
    const o: ObservedCluster = {
      now: 1, members: ['kv-0', 'kv-1', 'kv-2'].map((name, i) => ({ name, id: String(i + 1), configuredVersion: '3.5.21', running: true, release: '3.5.21', clusterVersion: '3.5.0', healthy: true, leader: i === 0, appliedIndex: 5 })),
      clusterMembers: [1, 2, 3].map((id, i) => ({ id: String(id), member: `kv-${i}`, started: true })), clusterMembersByLeader: true, catchUp: { leaderIndex: 5, ratePerSecond: 0 },
    };
    const spec = withDefaults({ version: '3.5.21', replicas: 4 });
    expect(plan(spec, o, undefined).kind).to.equal('addMember');
    const refused = plan(spec, { ...o, capabilities: ['backups'] }, undefined);
    expect(refused).to.deep.include({ kind: 'blocked', code: 'UnsupportedByRuntime', condition: 'RuntimeUnsupported' });
    expect((refused as { reason: string }).reason).to.match(/^the next step \(add member kv-3.*\) needs what this runtime cannot do \(scaling\); nothing was changed/);
    expect(plan(spec, { ...o, capabilities: ['scaling'] }, undefined).kind).to.equal('addMember');
  });
});
