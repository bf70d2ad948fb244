// The local runtime's evidence that a member lost its data, from its data dir and its own last start's log (no
// processes: a state file, data dirs and logs written by hand): an emptied data dir that had a write-ahead log, a start
// refused as already bootstrapped or on a corrupt database. A member that served and was killed is no loss, whatever
// its last line says, and the failure it reports is its own last run's, never an earlier one's.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDefaults } from '../../../operator/api/validate.js';
import { lossInLine } from '../../../operator/runtime/healing.js';
import { LocalRuntime } from '../../../operator/runtime/local/index.js';
import { writeState } from '../../../operator/runtime/local/state.js';

const line = (level: string, msg: string) => JSON.stringify({ level, ts: '2026-01-01T00:00:00Z', msg });
const REFUSED = 'member 5e3 has already been bootstrapped: the running cluster has a member with this ID, but its data dir /d holds no data';
const SERVED = line('info', 'ready to serve client requests');

describe('operator local runtime: lost data and failures from its own last run', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'svc-loss-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** One stopped member (pid of no process) with `log`, a data dir with a WAL or not, and hasData as recorded. */
  async function member(log: string, opts: { wal: boolean; hasData: boolean }) {
    const dataDir = join(dir, 'data', 'm-0');
    if (opts.wal) {
      mkdirSync(join(dataDir, 'member', 'wal'), { recursive: true });
      writeFileSync(join(dataDir, 'member', 'wal', '0000000000000000-0000000000000000.wal'), 'x');
    }
    const logFile = join(dir, 'm-0.log');
    writeFileSync(logFile, log);
    writeState(dir, {
      name: 'm', spec: withDefaults({ version: '3.5.21', replicas: 1 }), token: 't', createdAt: new Date(0).toISOString(),
      members: [{ name: 'm-0', clientPort: 1, peerPort: 2, dataDir, logFile, version: '3.5.21', pid: 2 ** 22 + 12345, hasData: opts.hasData }],
      records: {}, recordsVersion: 0, requests: {},
    });
    return (await new LocalRuntime({ stateDir: dir }).members())[0];
  }

  it('an emptied data dir that had a write-ahead log is DataLost', async () => {
    const m = await member(`=== svc start 3.5.21 t\n${SERVED}\n`, { wal: false, hasData: true });
    expect(m.lost).to.deep.include({ cause: 'DataLost' });
    expect(m.lost!.detail).to.match(/data dir .*m-0 is missing/);
  });

  it('a start refused as already bootstrapped, or on a corrupt database, is a loss; quoted from that start only', async () => {
    const refused = await member(`=== svc start 3.5.21 a\n${SERVED}\n=== svc start 3.5.21 b\n${line('info', 'starting svc')}\n${line('error', REFUSED)}\n`, { wal: false, hasData: false });
    expect(refused.lost).to.deep.include({ cause: 'AlreadyBootstrapped' });
    expect(refused.failure).to.match(/ended while starting; its last log line: error: member 5e3 has already been bootstrapped/);
    const corrupt = await member(`=== svc start 3.5.21 b\n${line('error', 'database file /d/member/snap/db is corrupt (its first meta page has no lmdb magic); replace the member')}\n`, { wal: true, hasData: true });
    expect(corrupt.lost).to.deep.include({ cause: 'DataCorrupt' });
  });

  it('a member that served and was killed is no loss, and says so, whatever its last line mentions', async () => {
    const m = await member(`=== svc start 3.5.21 a\n${line('info', 'starting svc')}\n${SERVED}\n${line('warn', 'wal: corrupt record in x at offset 3: repaired')}\n`, { wal: true, hasData: true });
    expect(m.lost).to.equal(undefined);
    expect(m.failure).to.match(/is gone after it had started and served \(killed, or crashed\); its last log line: wal: corrupt record/);
    // an earlier start's refusal is not this one's
    const later = await member(`=== svc start 3.5.21 a\n${line('error', REFUSED)}\n=== svc start 3.5.21 b\n${SERVED}\n`, { wal: true, hasData: true });
    expect(later.lost).to.equal(undefined);
    expect(later.failure).to.not.match(/bootstrapped/);
  });

  it('lossInLine knows svc\'s own words only', () => {
    expect(lossInLine(`error: ${REFUSED}`)).to.deep.include({ cause: 'AlreadyBootstrapped' });
    expect(lossInLine('error: wal: corrupt record in /d/member/wal/0.wal at offset 9: crc mismatch')).to.deep.include({ cause: 'DataCorrupt' });
    expect(lossInLine('error: failed to find database snapshot file: /d/member/snap/db is missing')).to.deep.include({ cause: 'DataCorrupt' });
    expect(lossInLine('2026-11-27 04:14:00.219761 C | etcdmain: discovery failed error="8e9e05c52164694d found data inconsistency with peers"')).to.deep.include({ cause: 'DataCorrupt' });
    expect(lossInLine('error: listen EADDRINUSE 127.0.0.1:2379')).to.equal(undefined);
    expect(lossInLine('warn: --experimental-corrupt-check-time is not supported')).to.equal(undefined);
  });
});
