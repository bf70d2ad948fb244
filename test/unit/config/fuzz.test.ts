import { expect } from 'chai';
import fc from 'fast-check';
import { dump } from 'js-yaml';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServerConfig, ConfigError } from '../../../server/config/flags.js';
import { FLAGS } from '../../../server/config/flag-table.js';
import { releaseFor } from '../../../server/releases.js';

const RELEASES = ['3.3.27', '3.4.34', '3.5.21'].map(releaseFor);

// Arguments that look like real flags most of the time, so the property reaches deep validation.
const flagName = fc.oneof(fc.constantFrom(...FLAGS.map((f) => f.name), 'help', 'h', 'foo'), fc.string({ maxLength: 6 }));
const value = fc.oneof(
  fc.constantFrom('', 'true', 'false', '0', '1', '-1', '100', 'http://127.0.0.1:2380', 'https://x:1', 'a=http://localhost:2380', 'zap', 'capnslog', 'stderr,stdout', 'default', '5s', '1h', 'DEBUG', 'new', 'existing'),
  fc.string({ maxLength: 12 }),
);
const arg = fc.oneof(
  fc.tuple(fc.constantFrom('-', '--'), flagName, value).map(([d, n, v]) => `${d}${n}=${v}`),
  fc.tuple(fc.constantFrom('-', '--'), flagName).map(([d, n]) => `${d}${n}`),
  value,
);
const envEntry = fc.tuple(fc.constantFrom(...FLAGS.map((f) => 'SVC_' + f.name.toUpperCase().replace(/-/g, '_')), 'SVC_X'), value);

describe('parseServerConfig fuzz', () => {
  it('on random argv and environment never throws anything but ConfigError', () => {
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 8 }), fc.array(envEntry, { maxLength: 3 }), fc.integer({ min: 0, max: 2 }), (argv, envs, ri) => {
        const env = Object.fromEntries(envs);
        try {
          const r = parseServerConfig(argv, env, RELEASES[ri]);
          expect(['run', 'help', 'version']).to.include(r.action);
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          expect(e.message.length).to.be.greaterThan(0);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('on random config files never throws anything but ConfigError', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-config-fuzz-'));
    const path = join(dir, 'c.yaml');
    const key = fc.oneof(fc.constantFrom(...FLAGS.map((f) => f.name), 'client-transport-security', 'peer-transport-security'), fc.string({ maxLength: 5 }));
    const section = fc.dictionary(fc.constantFrom('cert-file', 'key-file', 'client-cert-auth', 'trusted-ca-file', 'auto-tls', 'ca-file', 'x'), fc.jsonValue({ maxDepth: 1 }));
    const val = fc.oneof(value, fc.boolean(), fc.integer(), fc.array(value, { maxLength: 3 }), section, fc.constant(null));
    try {
      fc.assert(
        fc.property(fc.dictionary(key, val, { maxKeys: 6 }), fc.integer({ min: 0, max: 2 }), fc.boolean(), (doc, ri, raw) => {
          writeFileSync(path, raw ? JSON.stringify(doc).slice(0, -1) : dump(doc));
          try {
            parseServerConfig(['--config-file', path], {}, RELEASES[ri]);
          } catch (e) {
            if (!(e instanceof ConfigError)) throw e;
          }
        }),
        { numRuns: 500 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
