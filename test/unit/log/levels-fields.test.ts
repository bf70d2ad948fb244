import { expect } from 'chai';
import { parseLevel, LevelError } from '../../../server/log/levels.js';
import { formatGoDuration, duration, durationNs, fieldText } from '../../../server/log/fields.js';
import { zapTimestamp, capnslogTimestamp } from '../../../server/log/format.js';

describe('parseLevel', () => {
  it("maps the reference's capnslog level names (any case) and zap's names", () => {
    const cases: Record<string, string> = {
      DEBUG: 'debug', INFO: 'info', NOTICE: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'fatal', TRACE: 'debug',
      debug: 'debug', Info: 'info', warn: 'warn', error: 'error', fatal: 'fatal', panic: 'fatal', D: 'debug', C: 'fatal',
    };
    for (const [name, level] of Object.entries(cases)) expect(parseLevel(name), name).to.equal(level);
  });
  it('throws a LevelError for unknown names', () => {
    for (const bad of ['', 'LOUD', 'verbose', 'DEBUGX']) expect(() => parseLevel(bad)).to.throw(LevelError, /unknown log level/);
  });
});

describe('Go-style durations', () => {
  it('formats like time.Duration.String()', () => {
    const cases: Array<[bigint, string]> = [
      [0n, '0s'], [1n, '1ns'], [999n, '999ns'], [1500n, '1.5µs'], [2_550_000n, '2.55ms'], [1_000_000n, '1ms'],
      [1_200_000_000n, '1.2s'], [60_000_000_000n, '1m0s'], [90_500_000_000n, '1m30.5s'], [7_200_000_000_000n, '2h0m0s'], [-1_500_000n, '-1.5ms'],
    ];
    for (const [ns, text] of cases) expect(formatGoDuration(ns)).to.equal(text);
    expect(duration(2.55).toString()).to.equal('2.55ms');
    expect(durationNs(1234n).toString()).to.equal('1.234µs');
  });
});

describe('field text and timestamps', () => {
  it('quotes text values only when needed', () => {
    expect(fieldText('k', 'plain-token_1.2:3/x')).to.equal('plain-token_1.2:3/x');
    expect(fieldText('k', 'two words')).to.equal('"two words"');
    expect(fieldText('k', '')).to.equal('""');
    expect(fieldText('member-id', 255n)).to.equal('ff');
    expect(fieldText('k', { a: 1n })).to.equal('{"a":"1"}');
  });
  it('formats zap and capnslog timestamps in local time', () => {
    const t = new Date(2026, 10, 21, 17, 0, 0, 123).getTime() + 0.456;
    expect(zapTimestamp(t)).to.match(/^2026-11-21T17:00:00\.123(Z|[+-]\d{4})$/);
    expect(capnslogTimestamp(t)).to.equal('2026-11-21 17:00:00.123456');
  });
});
