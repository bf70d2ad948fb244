// `npm run chaos`: the full chaos suite. Runs seeded chaos runs over every scenario (crash, partition,
// snapshot catch-up, rolling upgrade, NOSPACE, defragmentation, replacement of a member that lost its data)
// and ends with the summary table; exits 1 when any run found an anomaly or a lost write.
//
//   node dist/bench/chaos.js [--runs N] [--seed S] [--scenario NAME] [--faults K] [--clients C] [--kinds a,b]
//
// Run i uses seed S+i and scenario SCENARIOS[i mod 7] (or the one given). Every run prints its replay command.

import { parseArgs } from 'node:util';
import { NETWORK_FAULTS, PROCESS_FAULTS, SPECIAL_FAULTS, type FaultKind } from '../harness/chaos/faults.js';
import { SCENARIOS, runChaos, summaryTable, type RunResult, type Scenario } from '../harness/chaos/run.js';

const USAGE = 'usage: node dist/bench/chaos.js [--runs N] [--seed S] [--scenario NAME] [--faults K] [--clients C] [--kinds a,b]\n' +
  `  scenarios: ${SCENARIOS.join(', ')}\n  fault kinds: ${[...PROCESS_FAULTS, ...NETWORK_FAULTS, ...SPECIAL_FAULTS].join(', ')}\n`;

class UsageError extends Error {}

/** A whole number flag (undefined when absent); anything else is a usage error. */
function count(name: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number >= ${min}, got "${text}"`);
  return n;
}

async function main(): Promise<number> {
  let values;
  try {
    values = parseArgs({
      options: {
        runs: { type: 'string' }, seed: { type: 'string' }, scenario: { type: 'string' }, faults: { type: 'string' },
        clients: { type: 'string' }, kinds: { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    process.stderr.write(`chaos: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let runs: number, seed: number, faults: number | undefined, clients: number | undefined;
  let kinds: FaultKind[] | undefined;
  const only = values.scenario as Scenario | undefined;
  try {
    if (only && !SCENARIOS.includes(only)) throw new UsageError(`unknown scenario ${only}; one of ${SCENARIOS.join(', ')}`);
    runs = count('runs', values.runs, 1) ?? SCENARIOS.length * 2;
    seed = count('seed', values.seed, 0) ?? Math.floor(Math.random() * 1e9);
    faults = count('faults', values.faults, 1);
    clients = count('clients', values.clients, 1);
    const known = new Set<string>([...PROCESS_FAULTS, ...NETWORK_FAULTS, ...SPECIAL_FAULTS]);
    kinds = values.kinds?.split(',') as FaultKind[] | undefined;
    const unknown = kinds?.filter((k) => !known.has(k)) ?? [];
    if (unknown.length) throw new UsageError(`unknown fault kind ${unknown.join(', ')}`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`chaos: ${e.message}\n${USAGE}`);
    return 2;
  }
  const results: RunResult[] = [];
  for (let i = 0; i < runs; i++) {
    const scenario = only ?? SCENARIOS[i % SCENARIOS.length];
    const r = await runChaos({ scenario, seed: seed + i, faults: faults ?? (only ? undefined : scenario === 'crash' || scenario === 'partition' ? 6 : 1), clients, kinds });
    results.push(r);
    process.stdout.write(`run ${i + 1}/${runs}: ${scenario} seed ${seed + i}: ${r.operations} ops, ${r.faults.length} faults, ${r.anomalies.length} anomalies, ${r.lostWrites.length} lost\n`);
  }
  process.stdout.write(`\n${summaryTable(results)}\n`);
  const bad = results.filter((r) => r.anomalies.length || r.lostWrites.length);
  for (const r of bad) process.stdout.write(`FAILED: ${r.replay}\n`);
  return bad.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
