// A runtime that says it has a capability implements that capability's interface, or it does not compile; and the
// planner never plans a step whose row in the step table needs a capability the runtime lacks.
import { expect } from 'chai';
import { join } from 'node:path';
import { withDefaults } from '../../../operator/api/validate.js';
import { plan } from '../../../operator/planner/plan.js';
import type { ObservedCluster } from '../../../operator/planner/types.js';
import { ROOT, typeCheckSuite } from './type-check.js';


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

typeCheckSuite('operator: runtime capabilities', 'tiny.mts', (errorsOf) => {

  it('a runtime that claims recovery without forceNewCluster does not compile, naming the method', () => {
    const errors = errorsOf(program("'recovery'", "  async takeRecoverySnapshot() { return { streamTo: '/x' }; }"));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^TS2420 tiny\.mts:\d+: .*Tiny.*forceNewCluster/s);
  });

  it('the same runtime with the method compiles, and one that claims nothing needs none', () => {
    expect(errorsOf(program("'recovery'", "  async takeRecoverySnapshot() { return { streamTo: '/x' }; }\n  async forceNewCluster() {}"))).to.deep.equal([]);
    expect(errorsOf(program('', ''))).to.deep.equal([]);
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
