// The before/after of a local-runtime test file, in one call inside its describe: a state dir, the runtime on it
// and a member client; after the suite the members are stopped and the state dir removed. Plus the one way such
// tests end a member's process behind the operator's back.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemberClient, type MemberClientOptions } from '../../../operator/members/index.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { waitFor } from '../../../harness/process.js';

export interface LocalFixture {
  stateDir: string;
  rt: LocalRuntime;
  mc: MemberClient;
}

/** Registers the suite's after hook and returns the runtime of cluster `name` on a fresh state dir. */
export function useLocalRuntime(name: string, client?: MemberClientOptions): LocalFixture {
  const stateDir = mkdtempSync(join(tmpdir(), `svc-op-${name}-`));
  const rt = new LocalRuntime({ stateDir, name });
  const mc = new MemberClient(client);
  after(async function () {
    this.timeout(60_000);
    mc.close();
    await rt.delete().catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  });
  return { stateDir, rt, mc };
}

/** Sends `signal` to process `pid` and waits until it is gone (or a zombie: the runtime that started it never reaps). */
export async function endProcess(pid: number, signal: NodeJS.Signals): Promise<void> {
  process.kill(pid, signal);
  await waitFor(`pid ${pid} gone after ${signal}`, async () => {
    try {
      process.kill(pid, 0);
      return readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z') || undefined;
    } catch {
      return true;
    }
  }, 20_000, 50);
}
