// Flag and config-file parsing under hostile input: byte-level mutations of a valid command line and a
// valid YAML config file, and hand-picked nasty files (alias bombs, deep nesting, binary, huge values,
// JS-specific YAML tags, directories). parseServerConfig may return or throw ConfigError, nothing else.
// (test/config/fuzz.test.ts fuzzes from the flag table's side; this one starts from valid input and breaks it.)

import { expect } from 'chai';
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, parseServerConfig } from '../../../server/config/flags.js';
import { releaseFor } from '../../../server/releases.js';
import { useTempDir } from '../../../harness/temp-dir.js';

const RELEASES = ['3.3.27', '3.4.34', '3.5.21'].map(releaseFor);

const VALID_ARGV = [
  '--name=m1',
  '--data-dir=/tmp/x',
  '--listen-client-urls=http://127.0.0.1:2379',
  '--advertise-client-urls=http://127.0.0.1:2379',
  '--listen-peer-urls=http://127.0.0.1:2380',
  '--initial-advertise-peer-urls=http://127.0.0.1:2380',
  '--initial-cluster=m1=http://127.0.0.1:2380',
  '--initial-cluster-state=new',
  '--snapshot-count=100',
  '--quota-backend-bytes=4194304',
  '--heartbeat-interval=100',
  '--election-timeout=1000',
];

const VALID_YAML = `name: m1
data-dir: /tmp/x
listen-client-urls: http://127.0.0.1:2379
advertise-client-urls: http://127.0.0.1:2379
listen-peer-urls: http://127.0.0.1:2380
initial-advertise-peer-urls: http://127.0.0.1:2380
initial-cluster: m1=http://127.0.0.1:2380
initial-cluster-state: new
snapshot-count: 100
heartbeat-interval: 100
election-timeout: 1000
client-transport-security:
  cert-file: ''
  client-cert-auth: false
`;

/** Runs the parser; fails the test on anything but a result or a ConfigError with a message. */
function onlyConfigError(argv: string[], release = RELEASES[2], env: NodeJS.ProcessEnv = {}): 'ok' | 'error' {
  try {
    parseServerConfig(argv, env, release);
    return 'ok';
  } catch (e) {
    if (!(e instanceof ConfigError)) throw new Error(`argv ${JSON.stringify(argv).slice(0, 400)}: threw ${(e as Error)?.name}: ${(e as Error)?.message}`, { cause: e });
    expect(e.message.length).to.be.greaterThan(0);
    return 'error';
  }
}

describe('fuzz: flag and config-file parsing', function () {
  this.timeout(120000);
  const tmp = useTempDir('svc-fuzz-config-');

  it('the valid inputs parse (so the mutations start from something real)', () => {
    for (const r of RELEASES) expect(onlyConfigError(VALID_ARGV, r)).to.equal('ok');
    const f = join(tmp.path, 'valid.yaml');
    writeFileSync(f, VALID_YAML);
    for (const r of RELEASES) expect(onlyConfigError(['--config-file', f], r)).to.equal('ok');
  });

  it('byte-level mutations of a valid command line throw only ConfigError', () => {
    const mutation = fc.record({
      arg: fc.nat(),
      pos: fc.nat(),
      kind: fc.constantFrom('flip', 'insert', 'delete', 'dup', 'split', 'swap-value'),
      ch: fc.oneof(fc.constantFrom('=', '-', ',', ':', '/', ' ', '\u0000', '%', '\u00ff', '\ud800', '9'.repeat(40)), fc.string({ maxLength: 3 })),
      release: fc.nat(2),
    });
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (ms) => {
        const argv = [...VALID_ARGV];
        for (const m of ms) {
          const i = m.arg % argv.length;
          const a = argv[i];
          const p = a.length ? m.pos % a.length : 0;
          switch (m.kind) {
            case 'flip':
              argv[i] = a.slice(0, p) + String.fromCharCode(a.charCodeAt(p) ^ (1 << (m.pos % 7))) + a.slice(p + 1);
              break;
            case 'insert':
              argv[i] = a.slice(0, p) + m.ch + a.slice(p);
              break;
            case 'delete':
              argv[i] = a.slice(0, p) + a.slice(p + 1);
              break;
            case 'dup':
              argv.splice(i, 0, a);
              break;
            case 'split':
              argv.splice(i, 1, a.slice(0, p), a.slice(p));
              break;
            default:
              argv[i] = a.replace(/=.*$/, `=${m.ch}`);
          }
        }
        onlyConfigError(argv, RELEASES[ms[0].release]);
      }),
      { numRuns: 2000, seed: 31337 },
    );
  });

  it('byte-level mutations of a valid YAML config file throw only ConfigError', () => {
    const f = join(tmp.path, 'mut.yaml');
    fc.assert(
      fc.property(
        fc.array(fc.record({ pos: fc.nat(), kind: fc.constantFrom('flip', 'insert', 'delete', 'cut'), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }), { minLength: 1, maxLength: 5 }),
        fc.nat(2),
        (ms, ri) => {
          let b = Buffer.from(VALID_YAML);
          for (const m of ms) {
            const p = m.pos % b.length;
            if (m.kind === 'flip') b[p] ^= m.bytes[0] || 1;
            else if (m.kind === 'insert') b = Buffer.concat([b.subarray(0, p), Buffer.from(m.bytes), b.subarray(p)]);
            else if (m.kind === 'delete') b = Buffer.concat([b.subarray(0, p), b.subarray(p + 1)]);
            else b = b.subarray(0, p);
            if (b.length === 0) b = Buffer.from('x');
          }
          writeFileSync(f, b);
          onlyConfigError(['--config-file', f], RELEASES[ri]);
        },
      ),
      { numRuns: 1500, seed: 4711 },
    );
  });

  it('hand-picked hostile config files throw only ConfigError', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    bomb.push('name: *i');
    const files: Record<string, string | Buffer> = {
      'alias-bomb.yaml': bomb.join('\n'),
      'deep.yaml': 'name: ' + '['.repeat(5000) + ']'.repeat(5000),
      'deep-map.yaml': Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1',
      'binary.yaml': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) & 0xff)),
      'nul.yaml': 'name: "m\u0000"\n',
      'bom.yaml': '\ufeffname: m1\n',
      'js-function.yaml': 'name: !!js/function "function () { return 1 }"\n',
      'js-regexp.yaml': 'name: !!js/regexp /x/\n',
      'python.yaml': 'name: !!python/object/apply:os.system ["true"]\n',
      'merge.yaml': 'base: &b {name: m1}\n<<: *b\n',
      'proto.yaml': '__proto__: {polluted: true}\nname: m1\n',
      'constructor.yaml': 'constructor: {prototype: {x: 1}}\n',
      'dup-keys.yaml': 'name: a\nname: b\n',
      'huge-number.yaml': `snapshot-count: ${'9'.repeat(400)}\n`,
      'negative.yaml': 'snapshot-count: -5\nquota-backend-bytes: -1\nheartbeat-interval: -100\n',
      'float.yaml': 'snapshot-count: 1.5e300\n',
      'nan.yaml': 'election-timeout: .nan\n',
      'inf.yaml': 'election-timeout: .inf\n',
      'list-for-string.yaml': 'name: [a, b]\n',
      'map-for-bool.yaml': 'enable-v2: {x: 1}\n',
      'huge-value.yaml': `name: ${'n'.repeat(2_000_000)}\n`,
      'many-keys.yaml': Array.from({ length: 20000 }, (_, i) => `k${i}: ${i}`).join('\n'),
      'bad-urls.yaml': 'listen-client-urls: "http://[::1:2379,unix://x,,,http://:0"\n',
      'bad-cluster.yaml': 'initial-cluster: "=,=,a=,=b,a=http://x:1,a=http://y:2"\n',
      'tls-junk.yaml': 'client-transport-security: 7\npeer-transport-security: [1, 2]\n',
      'tabs.yaml': 'name:\tm1\n\tdata-dir: x\n',
      'multi-doc.yaml': 'name: a\n---\nname: b\n',
      'empty.yaml': '',
      'only-comment.yaml': '# nothing\n',
      'scalar.yaml': '42\n',
      'null.yaml': 'null\n',
    };
    for (const [name, content] of Object.entries(files)) {
      const f = join(tmp.path, name);
      writeFileSync(f, content);
      for (const r of RELEASES) onlyConfigError(['--config-file', f], r);
      onlyConfigError([], RELEASES[2], { SVC_CONFIG_FILE: f });
    }
    const sub = join(tmp.path, 'a-directory');
    mkdirSync(sub);
    for (const path of [sub, join(tmp.path, 'missing.yaml'), '', '/dev/null', '\u0000', 'x'.repeat(5000)]) onlyConfigError(['--config-file', path]);
  });

  it('hostile environment variables throw only ConfigError', () => {
    const values = ['', '\u0000', '-1', '99999999999999999999999', 'true,false', '=', 'http://', 'a=b=c', '%zz', '\ud800'];
    const names = ['SVC_SNAPSHOT_COUNT', 'SVC_LISTEN_CLIENT_URLS', 'SVC_INITIAL_CLUSTER', 'SVC_ENABLE_V2', 'SVC_LOG_LEVEL', 'SVC_QUOTA_BACKEND_BYTES', 'SVC_NAME', 'SVC_UNKNOWN_THING'];
    for (const n of names) for (const v of values) for (const r of RELEASES) onlyConfigError(['--name=m1'], r, { [n]: v });
  });
});
