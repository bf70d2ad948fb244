// The public library entry points (package.json "exports"): svc/wal and svc/adt, as the spec's 3.4 library
// changes describe them.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as wal from '../../../server/lib/wal.js';
import * as adt from '../../../server/lib/adt.js';
import type { Logger, LogFields } from '../../../server/log/logger.js';

function recordingLogger(lines: string[]): Logger {
  const rec = (level: string) => (msg: string, _f?: LogFields) => void lines.push(`${level} ${msg}`);
  const l: Logger = { debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error'), child: () => l };
  return l;
}

describe('library entry points', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lib-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('svc/wal: create, open, openForRead and repair take a structured logger first', async () => {
    const lines: string[] = [];
    const logger = recordingLogger(lines);
    const w = await wal.create(logger, join(dir, 'wal'), Buffer.from('meta'));
    await w.save({ term: 1, vote: 0n, commit: 1 }, [{ term: 1, index: 1, type: 0, data: Buffer.from('a') }], true);
    await w.close();
    const r = await wal.openForRead(logger, join(dir, 'wal'), { index: 0, term: 0 });
    const all = await r.readAll();
    expect(Buffer.from(all.metadata).toString()).to.equal('meta');
    expect(all.entries.map((e) => Buffer.from(e.data).toString())).to.deep.equal(['a']);
    await r.close();
    expect(await wal.repair(logger, join(dir, 'wal'))).to.be.a('boolean');
    const again = await wal.open(logger, join(dir, 'wal'), { index: 0, term: 0 });
    await again.readAll();
    await again.close();
    expect(wal.exists(join(dir, 'wal'))).to.equal(true);
    expect(wal.create.length).to.be.greaterThanOrEqual(3);
  });

  it('svc/adt: the interval tree is an interface made by newIntervalTree(); the class is not exported', () => {
    const t = adt.newIntervalTree<string>();
    t.insert({ begin: 'a', end: 'c' }, 'ac');
    t.insert({ begin: 'x', end: null }, 'x..');
    expect(t.stab('b').map((v) => v.val)).to.deep.equal(['ac']);
    expect(t.stab('zz').map((v) => v.val)).to.deep.equal(['x..']);
    expect(Object.keys(adt)).to.deep.equal(['newIntervalTree']);
  });

  it('package.json exports the four entry points', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    expect(Object.keys(pkg.exports)).to.include.members(['./embed', './client', './wal', './adt']);
  });
});
