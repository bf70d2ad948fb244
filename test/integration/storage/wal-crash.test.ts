import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nopLogger } from '../../../server/log/logger.js';
import { openWal } from '../../../server/storage/wal.js';

const walJs = new URL('../../../server/storage/wal.js', import.meta.url).href;
const logJs = new URL('../../../server/log/logger.js', import.meta.url).href;

// The child appends forever with several saves in flight (so group commit batches them) and prints
// "ok <index>" only after a save's promise resolved. stdout to a pipe is synchronous on Linux, so a
// printed line means the resolution really happened before the kill.
const CHILD = `
import { createWal, openWal, walExists } from ${JSON.stringify(walJs)};
import { nopLogger } from ${JSON.stringify(logJs)};
const dir = process.env.WAL_DIR;
const opts = { segmentSizeBytes: 16 * 1024 };
let w;
let next = 1;
if (walExists(dir)) {
  w = await openWal(nopLogger, dir, { index: 0, term: 0 }, opts);
  const r = await w.readAll();
  next = (r.entries.at(-1)?.index ?? 0) + 1;
} else {
  w = await createWal(nopLogger, dir, new Uint8Array([1, 2, 3]), opts);
}
process.stdout.write('ready ' + next + '\\n');
let inflight = 0;
function pump() {
  while (inflight < 8) {
    const i = next++;
    inflight++;
    const data = Buffer.from('value-' + i + '-' + 'p'.repeat(i % 97));
    w.save({ term: 1, vote: 1n, commit: i - 1 }, [{ term: 1, index: i, type: 0, data }]).then(
      () => { inflight--; process.stdout.write('ok ' + i + '\\n'); pump(); },
      (e) => { console.error(e); process.exit(3); });
  }
}
pump();
`;

/** Runs the child until it has acknowledged `target` more saves, then SIGKILLs it; returns the acknowledged indexes. */
function runAndKill(dir: string, target: number): Promise<number[]> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      env: { ...process.env, WAL_DIR: dir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: number[] = [];
    let buf = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith('ok ')) acked.push(Number(line.slice(3)));
      }
      if (!killed && acked.length >= target) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited by itself: code ${code}`));
      else resolvePromise(acked);
    });
  });
}

describe('wal crash safety (kill -9)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'wal-crash-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('keeps every save whose promise resolved before a SIGKILL, across repeated crashes', async function () {
    this.timeout(120000);
    const dir = join(root, 'wal');
    const allAcked: number[] = [];
    for (const target of [300, 517, 260]) {
      const acked = await runAndKill(dir, target);
      expect(acked.length).to.be.at.least(target);
      allAcked.push(...acked);

      const w = await openWal(nopLogger, dir, { index: 0, term: 0 });
      const { entries, metadata, hardState } = await w.readAll();
      await w.close();
      expect(Array.from(metadata)).to.deep.equal([1, 2, 3]);
      // The log is contiguous from 1 and holds every acknowledged entry with its exact data.
      entries.forEach((e, i) => expect(e.index).to.equal(i + 1));
      for (const i of allAcked) {
        const e = entries[i - 1];
        expect(e, `acknowledged entry ${i}`).to.not.equal(undefined);
        expect(Buffer.from(e!.data).toString()).to.equal('value-' + i + '-' + 'p'.repeat(i % 97));
      }
      expect(hardState.commit).to.be.at.least(Math.max(...allAcked) - 1);
    }
    // The crashes happened across segment cuts, not inside one file.
    expect(readdirSync(dir).filter((n) => n.endsWith('.wal')).length).to.be.greaterThan(3);
  });
});
