import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLogger, LogSetupError, packageLogger } from '../../../server/log/create-logger.js';
import { duration } from '../../../server/log/fields.js';
import { useTempDir } from '../../../harness/temp-dir.js';

const run = promisify(execFile);
const ZAP_TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d{4})$/;
const CAPNS_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} ([DIWEC]) \| ([\w-]+): (.*)$/;

describe('createLogger', () => {
  let n = 0;
  const tmp = useTempDir('svc-log-');
  const path = (): string => join(tmp.path, `l${n++}.log`);
  const lines = (p: string): string[] => readFileSync(p, 'utf8').split('\n').filter((l) => l !== '');

  it('zap: one JSON object per line, keys level, ts, caller, msg, then the fields in order', async () => {
    const p = path();
    const log = createLogger({ logger: 'zap', outputs: [p], level: 'info', pkg: 'etcdserver' });
    log.child({ 'local-member-id': 0x8e9e05c52164694dn }).info('set initial cluster version', {
      'cluster-id': 0xcdf818194e3a8c32n,
      'cluster-version': '3.0',
      took: duration(2.55),
      count: 12345678901234567890n,
      ok: true,
      urls: ['http://127.0.0.1:2379'],
      error: new Error('boom'),
      skipped: undefined,
    });
    await log.close();
    const [line] = lines(p);
    const rec = JSON.parse(line);
    expect(Object.keys(rec)).to.deep.equal(['level', 'ts', 'caller', 'msg', 'local-member-id', 'cluster-id', 'cluster-version', 'took', 'count', 'ok', 'urls', 'error']);
    expect(rec.level).to.equal('info');
    expect(rec.ts).to.match(ZAP_TS);
    expect(rec.caller).to.match(/^etcdserver\/logger\.test\.(js|ts):\d+$/);
    expect(rec.msg).to.equal('set initial cluster version');
    expect(rec['local-member-id']).to.equal('8e9e05c52164694d');
    expect(rec['cluster-id']).to.equal('cdf818194e3a8c32');
    expect(rec.took).to.equal('2.55ms');
    expect(rec.count).to.equal('12345678901234567890');
    expect(rec.urls).to.deep.equal(['http://127.0.0.1:2379']);
    expect(rec.error).to.equal('boom');
  });

  it('capnslog: "<date> <time.micros> L | pkg: msg key=value" with the same msg text as zap', async () => {
    const p = path();
    const log = createLogger({ logger: 'capnslog', outputs: [p], level: 'debug', pkg: 'etcdserver' });
    log.info('set initial cluster version', { 'cluster-version': '3.0', 'cluster-id': 0xabcn, note: 'two words' });
    log.debug('d');
    log.warn('w');
    log.error('e');
    log.fatal('c');
    packageLogger(log, 'raft').info('from raft');
    await log.close();
    const ls = lines(p);
    expect(ls).to.have.length(6);
    const m = CAPNS_LINE.exec(ls[0]);
    expect(m, ls[0]).to.not.equal(null);
    expect(m![1]).to.equal('I');
    expect(m![2]).to.equal('etcdserver');
    expect(m![3]).to.equal('set initial cluster version cluster-version=3.0 cluster-id=abc note="two words"');
    expect(ls.slice(1, 5).map((l) => CAPNS_LINE.exec(l)![1])).to.deep.equal(['D', 'W', 'E', 'C']);
    expect(CAPNS_LINE.exec(ls[5])![2]).to.equal('raft');
  });

  it('filters by level and changes the level at run time', async () => {
    const p = path();
    const log = createLogger({ logger: 'zap', outputs: [p], level: 'info' });
    log.debug('hidden-1');
    log.info('shown-1');
    expect(log.level()).to.equal('info');
    expect(log.enabled('debug')).to.equal(false);
    log.setLevel('debug');
    expect(log.enabled('debug')).to.equal(true);
    log.debug('shown-2');
    log.setLevel('error');
    log.warn('hidden-2');
    log.error('shown-3');
    const child = log.child({ a: 1 });
    log.setLevel('warn');
    child.warn('shown-4'); // children share the level
    child.info('hidden-3');
    await log.close();
    const msgs = lines(p).map((l) => JSON.parse(l).msg);
    expect(msgs).to.deep.equal(['shown-1', 'shown-2', 'shown-3', 'shown-4']);
    expect(JSON.parse(lines(p)[1]).level).to.equal('debug');
  });

  it('appends to existing files and writes every line to every zap output', async () => {
    const a = path();
    const b = path();
    writeFileSync(a, 'previous\n');
    const log = createLogger({ logger: 'zap', outputs: [a, b], level: 'info' });
    for (let i = 0; i < 100; i++) log.info('line', { i });
    await log.close();
    expect(lines(a)[0]).to.equal('previous');
    expect(lines(a)).to.have.length(101);
    expect(lines(b).map((l) => JSON.parse(l).i)).to.deep.equal([...Array(100).keys()]);
  });

  it('close is idempotent and later records are dropped', async () => {
    const p = path();
    const log = createLogger({ logger: 'capnslog', outputs: [p], level: 'info' });
    log.info('one');
    await log.close();
    await log.close();
    log.info('two');
    expect(lines(p)).to.have.length(1);
  });

  it('refuses several outputs for capnslog, no outputs, and an unopenable file', () => {
    expect(() => createLogger({ logger: 'capnslog', outputs: ['stderr', path()], level: 'info' })).to.throw(LogSetupError, /only 1 log output/);
    expect(() => createLogger({ logger: 'zap', outputs: [], level: 'info' })).to.throw(LogSetupError);
    expect(() => createLogger({ logger: 'zap', outputs: [join(tmp.path, 'missing', 'x.log')], level: 'info' })).to.throw(LogSetupError, /cannot open log output/);
  });

  it('writes to stdout / stderr ("default" is stderr) and flushes queued lines when the process exits', async () => {
    const mod = fileURLToPath(new URL('../../../server/log/create-logger.js', import.meta.url));
    const script = `
      const { createLogger } = await import(${JSON.stringify(mod)});
      const out = createLogger({ logger: 'zap', outputs: ['stdout'], level: 'info', pkg: 'etcdmain' });
      const err = createLogger({ logger: 'capnslog', outputs: ['default'], level: 'info', pkg: 'etcdmain' });
      out.info('to stdout', { n: 1 });
      err.warn('to stderr');
      process.exit(0);
    `;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    const rec = JSON.parse(stdout.trim());
    expect(rec).to.include({ level: 'info', msg: 'to stdout', n: 1 });
    expect(rec.caller).to.match(/^etcdmain\//);
    expect(stderr.trim()).to.match(/ W \| etcdmain: to stderr$/);
  });
});
