// Entry point of svc-operator (bin/svc-operator).
export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'demo') {
    process.stdout.write('svc-operator demo: the rolling-upgrade demo (3.3 -> 3.4 -> 3.5 on local processes) will run here once the orchestrator exists.\n');
    return 0;
  }
  process.stderr.write('svc-operator: usage: svc-operator demo\n');
  return 2;
}
