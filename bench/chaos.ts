// `npm run chaos`: the full chaos suite. Runs seeded chaos runs over every scenario (crash, partition,
// snapshot catch-up, rolling upgrade, NOSPACE) and ends with the summary table; exits 1 when any run
// found an anomaly or a lost write.
//
//   node dist/bench/chaos.js [--runs N] [--seed S] [--scenario NAME] [--faults K] [--clients C] [--kinds a,b]
//
// Run i uses seed S+i and scenario SCENARIOS[i mod 5] (or the one given). Every run prints its replay command.

import type { FaultKind } from '../test/chaos/faults.js';
import { SCENARIOS, runChaos, summaryTable, type RunResult, type Scenario } from '../test/chaos/run.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

async function main(): Promise<number> {
  const runs = Number(arg('runs') ?? SCENARIOS.length * 2);
  const seed = Number(arg('seed') ?? Math.floor(Math.random() * 1e9));
  const only = arg('scenario') as Scenario | undefined;
  if (only && !SCENARIOS.includes(only)) {
    process.stderr.write(`unknown scenario ${only}; one of ${SCENARIOS.join(', ')}\n`);
    return 2;
  }
  const faults = arg('faults') ? Number(arg('faults')) : undefined;
  const clients = arg('clients') ? Number(arg('clients')) : undefined;
  const kinds = arg('kinds') ? (arg('kinds')!.split(',') as FaultKind[]) : undefined;
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
