// The Go-library formats svcctl reproduces (durations, SI sizes, tables, encoding/json of responses), the
// txn input syntax, flag parsing and unknown-command suggestions: no processes needed.
import { expect } from 'chai';
import { goDuration, goJson, hex16, humanizeBytes, parseGoDuration, renderTable } from '../../../server/cli/svcctl/format.js';
import { argify, parseCompare, parseRequest } from '../../../server/cli/svcctl/txn-parse.js';
import { COMMAND_FLAGS, GLOBAL_FLAGS, applyEnv, parseArgs } from '../../../server/cli/svcctl/flags.js';
import { suggestions } from '../../../server/cli/svcctl/suggest.js';
import { CliError } from '../../../server/cli/svcctl/errors.js';
import { prefixEnd } from '../../../server/client/index.js';

describe('svcctl formats', function () {
  it('prints durations like Go', function () {
    expect(goDuration(0n)).to.equal('0s');
    expect(goDuration(999n)).to.equal('999ns');
    expect(goDuration(1500n)).to.equal('1.5µs');
    expect(goDuration(2550000n)).to.equal('2.55ms');
    expect(goDuration(118736753n)).to.equal('118.736753ms');
    expect(goDuration(1000000000n)).to.equal('1s');
    expect(goDuration(61500000000n)).to.equal('1m1.5s');
    expect(goDuration(3600000000000n)).to.equal('1h0m0s');
    expect(parseGoDuration('2s')).to.equal(2000);
    expect(parseGoDuration('1m30s')).to.equal(90000);
    expect(parseGoDuration('500ms')).to.equal(500);
    expect(() => parseGoDuration('2x')).to.throw('invalid duration');
  });

  it('prints sizes like go-humanize (half to even)', function () {
    expect(humanizeBytes(5)).to.equal('5 B');
    expect(humanizeBytes(20480)).to.equal('20 kB');
    expect(humanizeBytes(45056)).to.equal('45 kB');
    expect(humanizeBytes(24576)).to.equal('25 kB');
    expect(humanizeBytes(2100000)).to.equal('2.1 MB');
  });

  it('renders tables with centred headers and right-aligned cells', function () {
    expect(renderTable(['endpoint', 'hash'], [['127.0.0.1:24200', '3581052765']])).to.equal(
      '+-----------------+------------+\n' +
        '|    ENDPOINT     |    HASH    |\n' +
        '+-----------------+------------+\n' +
        '| 127.0.0.1:24200 | 3581052765 |\n' +
        '+-----------------+------------+\n',
    );
  });

  it('encodes responses like encoding/json: numbers, base64, zero fields omitted, proto order', function () {
    const r = {
      count: '1',
      more: false,
      kvs: [{ value: Buffer.from('bar'), lease: '0', key: Buffer.from('foo'), version: '1', mod_revision: '2', create_revision: '2' }],
      header: { raft_term: '2', revision: '2', member_id: '16029321249485996844', cluster_id: '6716379416757454806' },
    };
    expect(goJson(r)).to.equal(
      '{"header":{"cluster_id":6716379416757454806,"member_id":16029321249485996844,"revision":2,"raft_term":2},' +
        '"kvs":[{"key":"Zm9v","create_revision":2,"mod_revision":2,"version":1,"value":"YmFy"}],"count":1}',
    );
    expect(goJson({ header: null, version: '3.4.23', dbSize: '20480' })).to.equal('{"version":"3.4.23","dbSize":20480}');
    expect(goJson({ events: [{ type: 'PUT', kv: { key: Buffer.from('a') } }, { type: 'DELETE' }] })).to.equal('{"events":[{"kv":{"key":"YQ=="}},{"type":1}]}');
    expect(hex16('5118237618903973386')).to.equal('4707a1ff2ecffe0a');
  });
});

describe('svcctl txn syntax', function () {
  it('splits quoted words', function () {
    expect(argify('put k1 "x y" --prev-kv')).to.deep.equal(['put', 'k1', 'x y', '--prev-kv']);
    expect(argify('put "a\\"b" c')).to.deep.equal(['put', 'a"b', 'c']);
  });

  it('parses compares', function () {
    expect(parseCompare('mod("k1") > "0"')).to.deep.equal({ key: 'k1', target: 'MOD', result: 'GREATER', value: 0n });
    expect(parseCompare('value("k1") != "v"')).to.deep.equal({ key: 'k1', target: 'VALUE', result: 'NOT_EQUAL', value: 'v' });
    expect(parseCompare('ver("k") = "2"')).to.include({ target: 'VERSION', result: 'EQUAL' });
    expect(parseCompare('c("k") < "5"')).to.include({ target: 'CREATE', result: 'LESS' });
    expect(parseCompare('lease("k") = "0"')).to.include({ target: 'LEASE' });
    expect(() => parseCompare('bogus')).to.throw(CliError, 'malformed comparison: bogus');
    expect(() => parseCompare('size("k") = "1"')).to.throw(CliError, 'unknown target size');
  });

  it('parses requests with their flags', function () {
    expect(parseRequest('put k v --prev-kv')).to.deep.equal({ put: { key: 'k', value: 'v', options: { lease: '0', prevKv: true } } });
    const g = parseRequest('get a --prefix') as { get: { key: string; options: { prefix: boolean } } };
    expect(g.get.key).to.equal('a');
    expect(g.get.options.prefix).to.equal(true);
    expect(parseRequest('del a z')).to.deep.include({ delete: { key: 'a', options: { prefix: false, fromKey: false, prevKv: false, rangeEnd: 'z' } } });
    expect(() => parseRequest('watch a')).to.throw(CliError, 'invalid txn request');
  });
});

describe('svcctl flags and suggestions', function () {
  it('parses pflag-style flags anywhere, with SVCCTL_* filling the gaps', function () {
    const p = parseArgs(['get', '--prefix', 'k', '-w', 'json', '--limit=3', '--', '--not-a-flag'], [...GLOBAL_FLAGS, ...COMMAND_FLAGS]);
    expect(p.positional).to.deep.equal(['get', 'k', '--not-a-flag']);
    expect(Object.fromEntries(p.flags)).to.deep.equal({ prefix: 'true', 'write-out': 'json', limit: '3' });
    applyEnv(p.flags, { SVCCTL_ENDPOINTS: 'a:1', SVCCTL_WRITE_OUT: 'table', SVCCTL_DIAL_TIMEOUT: '3s' });
    expect(p.flags.get('endpoints')).to.equal('a:1');
    expect(p.flags.get('write-out')).to.equal('json');
    expect(p.flags.get('dial-timeout')).to.equal('3s');
    expect(() => parseArgs(['--nope'], GLOBAL_FLAGS)).to.throw(CliError, 'unknown flag: --nope');
  });

  it('suggests commands like cobra', function () {
    const cmds = ['get', 'put', 'del', 'txn', 'compaction', 'alarm', 'defrag', 'endpoint', 'move-leader', 'watch', 'version', 'lease', 'member', 'snapshot', 'auth', 'user', 'role'];
    expect(suggestions('set', cmds)).to.deep.equal(['get', 'put', 'del', 'user']);
    expect(suggestions('mem', cmds)).to.deep.equal(['get', 'del', 'member']);
    expect(suggestions('xyzzy', cmds)).to.deep.equal([]);
  });

  it('computes prefix range ends', function () {
    expect(prefixEnd('a')).to.deep.equal(Buffer.from('b'));
    expect(prefixEnd(Buffer.from([0x61, 0xff]))).to.deep.equal(Buffer.from('b'));
    expect(prefixEnd(Buffer.from([0xff]))).to.deep.equal(Buffer.from([0]));
  });
});
