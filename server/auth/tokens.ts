// --auth-token: which tokens Authenticate hands out. "simple" (the default) is svc's random token kept by every
// member (store.ts); "jwt,<option>=<value>,..." is a JSON Web Token signed with a key from a file, as the
// reference has it: claims username, revision (the auth revision it was issued at) and exp (now + ttl), checked
// by signature and expiry alone, so any member holding the key accepts it. Options: sign-method (required; the
// reference's list: RS256/384/512, PS256/384/512, ES256/384/512, EdDSA, HS256/384/512), priv-key and pub-key
// (PEM files; HS* uses the priv-key file's bytes as the secret), ttl (a duration, default 5m). With pub-key alone
// a member only verifies tokens: Authenticate fails there. Signing and verifying are fast-jwt's.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSigner, createVerifier, type Algorithm } from 'fast-jwt';
import { parseDurationMs } from '../config/values.js';
import { Code, ServerError } from '../core/errors.js';
import type { Logger } from '../log/logger.js';

/** A bad --auth-token; the message is the reference's. The member does not start. */
export class AuthTokenOptionsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthTokenOptionsError';
  }
}

const INVALID_OPTIONS = 'auth: invalid auth options';
const KNOWN_OPTIONS = new Set(['sign-method', 'pub-key', 'priv-key', 'ttl']);
const DEFAULT_TTL_MS = 5 * 60 * 1000;

type Family = 'rsa' | 'ec' | 'ed' | 'hmac';
const METHODS: Record<string, { family: Family; curve?: string }> = {
  RS256: { family: 'rsa' }, RS384: { family: 'rsa' }, RS512: { family: 'rsa' },
  PS256: { family: 'rsa' }, PS384: { family: 'rsa' }, PS512: { family: 'rsa' },
  ES256: { family: 'ec', curve: 'prime256v1' }, ES384: { family: 'ec', curve: 'secp384r1' }, ES512: { family: 'ec', curve: 'secp521r1' },
  EdDSA: { family: 'ed' },
  HS256: { family: 'hmac' }, HS384: { family: 'hmac' }, HS512: { family: 'hmac' },
};
const KEY_NAMES: Record<Exclude<Family, 'hmac'>, string> = { rsa: 'RSA', ec: 'ECDSA', ed: 'Ed25519' };

/** Who a verified token stands for, and the auth revision it was issued at. */
export interface TokenInfo {
  username: string;
  revision: number;
}

/** JWT tokens: sign (unless verify-only) and verify. */
export class JwtTokens {
  readonly kind = 'jwt';
  private readonly sign?: (payload: Record<string, unknown>) => string;
  private readonly verify: (token: string) => unknown;

  constructor(
    readonly method: string,
    signKey: KeyObject | Buffer | undefined,
    verifyKey: KeyObject | Buffer,
    readonly ttlMs: number,
    private readonly logger: Logger,
  ) {
    const pem = (k: KeyObject | Buffer, type: 'pkcs8' | 'spki') => (Buffer.isBuffer(k) ? k : (k.export({ type, format: 'pem' }) as string));
    if (signKey) this.sign = createSigner({ key: pem(signKey, 'pkcs8'), algorithm: method as Algorithm, noTimestamp: true });
    this.verify = createVerifier({ key: pem(verifyKey, 'spki'), algorithms: [method as Algorithm], cache: true });
  }

  get verifyOnly(): boolean {
    return this.sign === undefined;
  }

  /** A token for `username` at auth revision `revision`, valid for the ttl. */
  assign(username: string, revision: number, now = Date.now()): string {
    if (!this.sign) throw new ServerError(Code.Unknown, 'auth: token signing attempted with verify-only key');
    return this.sign({ exp: Math.floor((now + this.ttlMs) / 1000), revision, username });
  }

  /** The token's user and revision, or undefined for a token that is not ours, is altered or has expired. */
  info(token: string): TokenInfo | undefined {
    let claims: unknown;
    try {
      claims = this.verify(token);
    } catch (e) {
      this.logger.warn('failed to parse a JWT token', { token, error: (e as Error).message });
      return undefined;
    }
    const c = claims as { username?: unknown; revision?: unknown };
    if (typeof c?.username !== 'string' || typeof c.revision !== 'number') {
      this.logger.warn('invalid JWT token', { token });
      return undefined;
    }
    return { username: c.username, revision: c.revision };
  }
}

/** What --auth-token names: undefined for simple tokens, or the JWT provider. */
export type TokenProvider = JwtTokens | undefined;

/** "type,key=value,...": the type and its options; refused as the reference refuses them. */
function decompose(spec: string, logger: Logger): { type: string; opts: Map<string, string> } {
  const [type, ...rest] = spec.split(',');
  const opts = new Map<string, string>();
  for (const o of rest) {
    const pair = o.split('=');
    if (pair.length !== 2 || opts.has(pair[0])) {
      logger.error('invalid token option', { option: spec });
      throw new AuthTokenOptionsError(INVALID_OPTIONS);
    }
    opts.set(pair[0], pair[1]);
  }
  return { type, opts };
}

/** The token provider --auth-token asks for (key files are read here). Throws AuthTokenOptionsError. */
export function newTokenProvider(spec: string, logger: Logger, readFile: (path: string) => Buffer = readFileSync): TokenProvider {
  const { type, opts } = decompose(spec, logger);
  if (type === 'simple') return undefined;
  if (type !== 'jwt') {
    logger.warn('unknown token type', { type, error: INVALID_OPTIONS });
    throw new AuthTokenOptionsError(INVALID_OPTIONS);
  }
  // Options: any problem reading them is "invalid auth options", with the cause in the log.
  let ttlMs = DEFAULT_TTL_MS;
  let pub: Buffer | undefined;
  let priv: Buffer | undefined;
  const method = opts.get('sign-method') ?? '';
  try {
    const ttl = opts.get('ttl') ?? '';
    if (ttl !== '') ttlMs = parseDurationMs({ flag: 'auth-token', where: 'ttl' }, ttl);
    if (opts.get('pub-key')) pub = readFile(opts.get('pub-key')!);
    if (opts.get('priv-key')) priv = readFile(opts.get('priv-key')!);
    if (!Object.hasOwn(METHODS, method)) throw new Error('auth: invalid auth signature method');
  } catch (e) {
    logger.error('problem loading JWT options', { error: (e as Error).message });
    throw new AuthTokenOptionsError(INVALID_OPTIONS, { cause: e });
  }
  const unknown = [...opts.keys()].filter((k) => !KNOWN_OPTIONS.has(k));
  if (unknown.length > 0) logger.warn('unknown JWT options', { keys: unknown });

  const { family, curve } = METHODS[method];
  if (family === 'hmac') {
    if (!priv || priv.length === 0) throw new AuthTokenOptionsError('auth: missing key data');
    return new JwtTokens(method, priv, priv, ttlMs, logger);
  }
  const name = KEY_NAMES[family];
  const fits = (k: KeyObject) =>
    family === 'rsa' ? k.asymmetricKeyType === 'rsa' : family === 'ed' ? k.asymmetricKeyType === 'ed25519' : k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === curve;
  const parse = (data: Buffer, which: 'private' | 'public'): KeyObject => {
    let k: KeyObject;
    // (node would derive a public key from a private one; the reference wants a public key or a certificate)
    if (which === 'public' && /PRIVATE KEY-----/.test(data.toString('latin1'))) throw new AuthTokenOptionsError(`key is not a valid ${name} ${which} key`);
    try {
      k = which === 'private' ? createPrivateKey(data) : createPublicKey(data);
    } catch (e) {
      throw new AuthTokenOptionsError(`key is not a valid ${name} ${which} key`, { cause: e });
    }
    if (k.type !== which || !fits(k)) throw new AuthTokenOptionsError(`key is not a valid ${name} ${which} key`);
    return k;
  };
  const privKey = priv && priv.length > 0 ? parse(priv, 'private') : undefined;
  const pubKey = pub && pub.length > 0 ? parse(pub, 'public') : undefined;
  if (!privKey && !pubKey) throw new AuthTokenOptionsError('auth: missing key data');
  if (privKey && pubKey && !createPublicKey(privKey).equals(pubKey)) throw new AuthTokenOptionsError("auth: public and private keys don't match");
  // With the private key, tokens are verified with its public half; with the public key alone, verified only.
  return new JwtTokens(method, privKey, pubKey ?? createPublicKey(privKey!), ttlMs, logger);
}
