// --auth-token jwt,...: every signing method the reference accepts signs and verifies its own tokens, a token of
// another key, method or past its exp is refused, keys that do not fit the method are refused with the reference's
// texts, and the option string is taken apart as the reference does. (The integration test compares with the
// reference itself.)
import { expect } from 'chai';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { AuthTokenOptionsError, newTokenProvider, type JwtTokens } from '../../../server/auth/tokens.js';
import { nopLogger } from '../../../server/log/logger.js';

const files: Record<string, Buffer> = {};
function keyPair(name: string, pair: { publicKey: KeyObject; privateKey: KeyObject }): void {
  files[`${name}.pub`] = Buffer.from(pair.publicKey.export({ type: 'spki', format: 'pem' }));
  files[`${name}.key`] = Buffer.from(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
}

const provider = (spec: string) => newTokenProvider(spec, nopLogger, (f) => {
  if (!files[f]) throw new Error(`open ${f}: no such file or directory`);
  return files[f];
}) as JwtTokens;
const refused = (spec: string) => {
  try {
    provider(spec);
  } catch (e) {
    expect(e).to.be.instanceOf(AuthTokenOptionsError);
    return (e as Error).message;
  }
  return 'accepted';
};

describe('auth: JWT token provider (--auth-token jwt)', () => {
  before(() => {
    keyPair('rsa', generateKeyPairSync('rsa', { modulusLength: 2048 }));
    keyPair('rsa2', generateKeyPairSync('rsa', { modulusLength: 2048 }));
    keyPair('p256', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }));
    keyPair('p384', generateKeyPairSync('ec', { namedCurve: 'secp384r1' }));
    keyPair('p521', generateKeyPairSync('ec', { namedCurve: 'secp521r1' }));
    keyPair('ed', generateKeyPairSync('ed25519'));
    files['secret'] = Buffer.from('a shared secret');
  });

  const methods: Array<[string, string]> = [
    ['RS256', 'rsa'], ['RS384', 'rsa'], ['RS512', 'rsa'], ['PS256', 'rsa'], ['PS384', 'rsa'], ['PS512', 'rsa'],
    ['ES256', 'p256'], ['ES384', 'p384'], ['ES512', 'p521'], ['EdDSA', 'ed'],
  ];

  for (const [method, key] of methods) {
    it(`${method}: signs, verifies, and a member with only the public key verifies without signing`, () => {
      const full = provider(`jwt,priv-key=${key}.key,pub-key=${key}.pub,sign-method=${method},ttl=1m`);
      const token = full.assign('alice', 7);
      const [header, claims] = token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
      expect(header).to.deep.equal({ alg: method, typ: 'JWT' });
      expect(Object.keys(claims)).to.deep.equal(['exp', 'revision', 'username']);
      expect(Number(claims.exp) - Date.now() / 1000).to.be.within(58, 61);
      expect(full.info(token)).to.deep.equal({ username: 'alice', revision: 7 });
      const verifier = provider(`jwt,pub-key=${key}.pub,sign-method=${method}`);
      expect(verifier.verifyOnly).to.equal(true);
      expect(verifier.info(token)).to.deep.equal({ username: 'alice', revision: 7 });
      expect(() => verifier.assign('alice', 7)).to.throw('auth: token signing attempted with verify-only key');
      expect(full.info(`${token.slice(0, -6)}AAAAAA`)).to.equal(undefined);
    });
  }

  it('HS256/384/512 use the priv-key file as the secret', () => {
    for (const m of ['HS256', 'HS384', 'HS512']) {
      const t = provider(`jwt,priv-key=secret,sign-method=${m}`);
      expect(t.info(t.assign('bob', 3))).to.deep.equal({ username: 'bob', revision: 3 });
    }
    expect(refused('jwt,pub-key=rsa.pub,sign-method=HS256')).to.equal('auth: missing key data');
  });

  it('refuses tokens past exp, of another key and of another method', () => {
    const t = provider('jwt,priv-key=rsa.key,sign-method=RS256,ttl=1s');
    expect(t.info(t.assign('alice', 1, Date.now() - 5000))).to.equal(undefined);
    const other = provider('jwt,priv-key=rsa2.key,sign-method=RS256');
    expect(t.info(other.assign('alice', 1))).to.equal(undefined);
    const ps = provider('jwt,priv-key=rsa.key,sign-method=PS256');
    expect(t.info(ps.assign('alice', 1))).to.equal(undefined);
    // the default ttl: 5 minutes
    const d = provider('jwt,priv-key=rsa.key,sign-method=RS256');
    const exp = Number(JSON.parse(Buffer.from(d.assign('a', 1).split('.')[1], 'base64url').toString('utf8')).exp);
    expect(exp - Date.now() / 1000).to.be.within(298, 301);
  });

  it('takes the options apart as the reference does', () => {
    expect(newTokenProvider('simple', nopLogger)).to.equal(undefined);
    const cases: Array<[string, string]> = [
      ['jwt,sign-method=RS256,priv-key=rsa.key,priv-key=rsa.key', 'auth: invalid auth options'],
      ['jwt,sign-method', 'auth: invalid auth options'],
      ['jwt,sign-method=none,priv-key=rsa.key', 'auth: invalid auth options'],
      ['jwt,sign-method=RS256,priv-key=nofile', 'auth: invalid auth options'],
      ['jwt,sign-method=RS256,priv-key=rsa.key,ttl=5x', 'auth: invalid auth options'],
      ['opaque', 'auth: invalid auth options'],
      ['jwt,sign-method=RS256', 'auth: missing key data'],
      ['jwt,sign-method=ES256,pub-key=rsa.pub', 'key is not a valid ECDSA public key'],
      ['jwt,sign-method=ES256,priv-key=p384.key', 'key is not a valid ECDSA private key'],
      ['jwt,sign-method=RS256,priv-key=ed.key', 'key is not a valid RSA private key'],
      ['jwt,sign-method=EdDSA,pub-key=ed.key', 'key is not a valid Ed25519 public key'],
      ['jwt,sign-method=ES256,priv-key=p256.key,pub-key=p256.pub,bogus=1', 'accepted'],
      ['jwt,sign-method=RS256,priv-key=rsa.key,pub-key=rsa2.pub', "auth: public and private keys don't match"],
    ];
    for (const [options, answer] of cases) expect(refused(options), options).to.equal(answer);
  });
});
