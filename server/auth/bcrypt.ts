// bcrypt, the password hash the reference stores in authpb.User.password ("$2a$<cost>$<salt><hash>"): svc checks
// such hashes (users restored from the reference's snapshots keep their passwords) and writes them, so users
// created on svc keep theirs when its snapshot is restored into the reference. Blowfish's initial P-array and
// S-boxes are the fractional hex digits of pi, computed here once instead of tabulated.
import { randomBytes, timingSafeEqual } from 'node:crypto';

const B64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** The reference's default cost (bcrypt.DefaultCost). */
export const BCRYPT_DEFAULT_COST = 10;
const MAGIC = 'OrpheanBeholderScryDoubt';

let PI_WORDS: Uint32Array | undefined;

/** 18 + 4 * 256 words of pi's fraction in hex (Machin's formula in fixed point). */
function piWords(): Uint32Array {
  if (PI_WORDS) return PI_WORDS;
  const n = 18 + 1024;
  const bits = BigInt(n * 32 + 64);
  const one = 1n << bits;
  const arctanInv = (x: bigint): bigint => {
    let sum = 0n;
    let term = one / x;
    const x2 = x * x;
    for (let k = 0n; term !== 0n; k++) {
      const t = term / (2n * k + 1n);
      sum = k % 2n === 0n ? sum + t : sum - t;
      term /= x2;
    }
    return sum;
  };
  const pi = 16n * arctanInv(5n) - 4n * arctanInv(239n);
  const frac = pi - (3n << bits);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = Number((frac >> (bits - BigInt((i + 1) * 32))) & 0xffffffffn);
  PI_WORDS = out;
  return out;
}

class Blowfish {
  readonly P: Uint32Array;
  readonly S: Uint32Array;
  constructor() {
    const w = piWords();
    this.P = w.slice(0, 18);
    this.S = w.slice(18);
  }
  private f(x: number): number {
    const S = this.S;
    return (((S[x >>> 24] + S[256 + ((x >>> 16) & 0xff)]) ^ S[512 + ((x >>> 8) & 0xff)]) + S[768 + (x & 0xff)]) >>> 0;
  }
  encrypt(lr: Uint32Array, off: number): void {
    let l = lr[off];
    let r = lr[off + 1];
    const P = this.P;
    for (let i = 0; i < 16; i += 2) {
      l ^= P[i];
      r ^= this.f(l >>> 0);
      r ^= P[i + 1];
      l ^= this.f(r >>> 0);
    }
    lr[off] = (r ^ P[17]) >>> 0;
    lr[off + 1] = (l ^ P[16]) >>> 0;
  }
  /** Blowfish's key schedule with bcrypt's salt (zero salt: the plain schedule). */
  expand(key: Uint8Array, salt: Uint8Array | undefined): void {
    const word = (b: Uint8Array, pos: { p: number }) => {
      let v = 0;
      for (let i = 0; i < 4; i++) {
        v = ((v << 8) | b[pos.p]) >>> 0;
        pos.p = (pos.p + 1) % b.length;
      }
      return v;
    };
    const kpos = { p: 0 };
    for (let i = 0; i < 18; i++) this.P[i] = (this.P[i] ^ word(key, kpos)) >>> 0;
    const spos = { p: 0 };
    const lr = new Uint32Array(2);
    const fill = (arr: Uint32Array) => {
      for (let i = 0; i < arr.length; i += 2) {
        if (salt) {
          lr[0] ^= word(salt, spos);
          lr[1] ^= word(salt, spos);
        }
        this.encrypt(lr, 0);
        arr[i] = lr[0];
        arr[i + 1] = lr[1];
      }
    };
    fill(this.P);
    fill(this.S);
  }
}

function encode64(b: Uint8Array, len: number): string {
  let out = '';
  let i = 0;
  while (i < len) {
    let c1 = b[i++];
    out += B64[c1 >> 2];
    c1 = (c1 & 0x03) << 4;
    if (i >= len) {
      out += B64[c1];
      break;
    }
    let c2 = b[i++];
    c1 |= c2 >> 4;
    out += B64[c1];
    c1 = (c2 & 0x0f) << 2;
    if (i >= len) {
      out += B64[c1];
      break;
    }
    c2 = b[i++];
    c1 |= c2 >> 6;
    out += B64[c1];
    out += B64[c2 & 0x3f];
  }
  return out;
}

function decode64(s: string, len: number): Uint8Array | undefined {
  const out = new Uint8Array(len);
  const v = (i: number) => B64.indexOf(s[i] ?? '');
  let o = 0;
  let i = 0;
  while (o < len) {
    const c1 = v(i++);
    const c2 = v(i++);
    if (c1 < 0 || c2 < 0) return undefined;
    out[o++] = ((c1 << 2) | ((c2 & 0x30) >> 4)) & 0xff;
    if (o >= len) break;
    const c3 = v(i++);
    if (c3 < 0) return undefined;
    out[o++] = (((c2 & 0x0f) << 4) | ((c3 & 0x3c) >> 2)) & 0xff;
    if (o >= len) break;
    const c4 = v(i++);
    if (c4 < 0) return undefined;
    out[o++] = (((c3 & 0x03) << 6) | c4) & 0xff;
  }
  return out;
}

function rawHash(password: string, salt: Uint8Array, cost: number): Uint8Array {
  // the key is the password with its terminating NUL, at most 72 bytes
  const pw = Buffer.from(password, 'utf8');
  const key = Buffer.concat([pw, Buffer.from([0])]).subarray(0, 72);
  const bf = new Blowfish();
  bf.expand(key, salt);
  for (let i = 0; i < 2 ** cost; i++) {
    bf.expand(key, undefined);
    bf.expand(salt, undefined);
  }
  const ctext = new Uint32Array(6);
  const magic = Buffer.from(MAGIC, 'latin1');
  for (let i = 0; i < 6; i++) ctext[i] = magic.readUInt32BE(i * 4);
  for (let i = 0; i < 64; i++) for (let j = 0; j < 6; j += 2) bf.encrypt(ctext, j);
  const out = Buffer.alloc(24);
  for (let i = 0; i < 6; i++) out.writeUInt32BE(ctext[i], i * 4);
  return out;
}

/** A new "$2a$" hash of `password`. */
export function bcryptHash(password: string, cost = BCRYPT_DEFAULT_COST, salt: Uint8Array = randomBytes(16)): string {
  const h = rawHash(password, salt, cost);
  return `$2a$${String(cost).padStart(2, '0')}$${encode64(salt, 16)}${encode64(h, 23)}`;
}

/** Is `stored` a bcrypt hash? */
export function isBcrypt(stored: string): boolean {
  return /^\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}$/.test(stored);
}

/** Does `password` match the bcrypt hash `stored`? */
export function bcryptCheck(stored: string, password: string): boolean {
  if (!isBcrypt(stored)) return false;
  const parts = stored.split('$');
  const cost = Number(parts[2]);
  if (cost < 4 || cost > 31) return false;
  const salt = decode64(parts[3].slice(0, 22), 16);
  const want = decode64(parts[3].slice(22), 23);
  if (!salt || !want) return false;
  const got = rawHash(password, salt, cost).subarray(0, 23);
  return timingSafeEqual(Buffer.from(want), Buffer.from(got));
}
