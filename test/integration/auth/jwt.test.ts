// --auth-token jwt,... side by side with the reference 3.5 (issue 29 item 6): both members get the same options
// and key files; the same steps through the reference's etcdctl and the JSON gateway give the same answers. Tokens
// carry the same claims (username, revision, exp = now + ttl), each member accepts the other's tokens (same key),
// an expired token and one issued before an auth change are refused with the reference's errors, a member given
// only the public key verifies tokens but cannot sign one, and bad options stop both members.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigner } from 'fast-jwt';
import { etcdctl } from '../../../harness/etcdctl.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { spawnSingleMember, startSideBySide, TARGETS, type Target } from '../../../harness/side-by-side.js';
import { sleep, type LoggedProcess } from '../../../harness/process.js';
import { freePorts } from '../../../harness/ports.js';


/** A POST to the JSON gateway with a token: `<status> <grpc code> <error>` or `<status> ok`, and the body. */
async function gateway(url: string, path: string, body: unknown, token?: string): Promise<{ said: string; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: token ? { Authorization: token } : {} });
  const json = (await res.json()) as Record<string, unknown>;
  return { said: json.error !== undefined ? `${res.status} ${String(json.code)} ${String(json.error)}` : `${res.status} ok`, body: json };
}

function claimsOf(token: string): { header: unknown; claims: Record<string, unknown> } {
  const [h, c] = token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
  return { header: h, claims: c };
}

/** `etcdctl` 3.5's answer without its JSON warning lines: "<status>: <output>". */
async function ctl(url: string, args: string[]): Promise<string> {
  const r = await etcdctl([`--endpoints=${url}`, ...args], { bin: ref35('etcdctl') });
  return `${r.code}: ${`${r.stdout}${r.stderr}`.split('\n').filter((l) => !l.startsWith('{"level"')).join('\n').trim()}`;
}

describe('auth: JWT tokens (--auth-token jwt, side by side with the reference 3.5)', function () {
  this.timeout(120000);
  let dir: string;
  const procs: LoggedProcess[] = [];
  /** PEM files: an RSA and an EC P-256 key pair. */
  const keys = {} as Record<'rsaPriv' | 'rsaPub' | 'ecPriv' | 'ecPub', string>;
  let ecPrivPem: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-jwt-'));
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'sec1', format: 'pem' } });
    ecPrivPem = ec.privateKey;
    for (const [name, text] of [['rsaPriv', rsa.privateKey], ['rsaPub', rsa.publicKey], ['ecPriv', ec.privateKey], ['ecPub', ec.publicKey]] as const) {
      keys[name] = join(dir, `${name}.pem`);
      writeFileSync(keys[name], text);
    }
  });
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts svc and the reference with these extra flags; resolves with their client URLs once healthy. */
  async function startBoth(tag: string, flags: string[]): Promise<Record<Target, string>> {
    const m = await startSideBySide({ dir, tag, procs, flags });
    return { svc: m.svc.clientUrl, reference: m.reference.clientUrl };
  }

  function spawnOne(name: string, target: Target, flags: string[], clientPort: number, peerPort: number): { proc: LoggedProcess; client: string } {
    const { proc, clientUrl } = spawnSingleMember(target, { dir, name, clientPort, peerPort, flags });
    procs.push(proc);
    return { proc, client: clientUrl };
  }

  /** Users root (rootpw) and u (upw, may read "k" only), and authentication on. */
  async function setUp(url: string): Promise<string[]> {
    const out: string[] = [];
    for (const args of [['user', 'add', 'root', '--new-user-password=rootpw'], ['user', 'grant-role', 'root', 'root'], ['user', 'add', 'u', '--new-user-password=upw'], ['role', 'add', 'r'], ['role', 'grant-permission', 'r', 'read', 'k'], ['user', 'grant-role', 'u', 'r'], ['auth', 'enable'], ['--user=root:rootpw', 'put', 'k', 'v']]) {
      out.push(await ctl(url, args));
    }
    return out;
  }

  it('RS256 with a ttl: the same claims, tokens good on either, refused once expired or after an auth change', async () => {
    const urls = await startBoth('rs', [`--auth-token=jwt,pub-key=${keys.rsaPub},priv-key=${keys.rsaPriv},sign-method=RS256,ttl=3s`]);
    const setup = await Promise.all(TARGETS.map((t) => setUp(urls[t])));
    expect(setup[0]).to.deep.equal(setup[1]);
    expect(setup[0].at(-1)).to.equal('0: OK');
    // etcdctl authenticates with the token the member signs
    const asUser = await Promise.all(TARGETS.map(async (t) => [await ctl(urls[t], ['--user=u:upw', 'get', 'k', '--print-value-only']), await ctl(urls[t], ['--user=u:upw', 'put', 'k', 'x'])]));
    expect(asUser[0]).to.deep.equal(asUser[1]);
    expect(asUser[0]).to.deep.equal(['0: v', '1: Error: etcdserver: permission denied']);

    const issued = Date.now() / 1000;
    const tokens = {} as Record<Target, string>;
    for (const t of TARGETS) tokens[t] = String((await gateway(urls[t], '/v3/auth/authenticate', { name: 'u', password: 'upw' })).body.token);
    const [mine, theirs] = TARGETS.map((t) => claimsOf(tokens[t]));
    expect(mine.header).to.deep.equal({ alg: 'RS256', typ: 'JWT' });
    expect(mine.header).to.deep.equal(theirs.header);
    expect(Object.keys(mine.claims)).to.deep.equal(Object.keys(theirs.claims));
    expect({ ...mine.claims, exp: 0 }).to.deep.equal({ ...theirs.claims, exp: 0 });
    expect(Number(mine.claims.exp) - issued).to.be.within(1, 4);
    // the same key: each member takes the other's token
    const key = { key: Buffer.from('k').toString('base64') };
    for (const at of TARGETS) for (const from of TARGETS) expect((await gateway(urls[at], '/v3/kv/range', key, tokens[from])).said, `${from}'s token at ${at}`).to.equal('200 ok');
    // a token issued before an auth change speaks for an old revision
    const before = {} as Record<Target, string>;
    for (const t of TARGETS) before[t] = String((await gateway(urls[t], '/v3/auth/authenticate', { name: 'u', password: 'upw' })).body.token);
    for (const t of TARGETS) expect(await ctl(urls[t], ['--user=root:rootpw', 'role', 'add', 'r2'])).to.equal('0: Role r2 created');
    const old = await Promise.all(TARGETS.map(async (t) => (await gateway(urls[t], '/v3/kv/range', key, before[t])).said));
    expect(old[0]).to.equal(old[1]);
    expect(old[0]).to.equal('400 3 etcdserver: revision of auth store is old');
    // past exp
    await sleep(Math.max(0, (Number(mine.claims.exp) + 1.2 - Date.now() / 1000) * 1000));
    const expired = await Promise.all(TARGETS.map(async (t) => (await gateway(urls[t], '/v3/auth/user/get', { name: 'u' }, tokens[t])).said));
    expect(expired[0]).to.equal(expired[1]);
    expect(expired[0]).to.equal('401 16 etcdserver: invalid auth token');
  });

  it('ES256 with only the public key: verifies tokens, cannot sign one', async () => {
    const urls = await startBoth('es', [`--auth-token=jwt,pub-key=${keys.ecPub},sign-method=ES256`]);
    const setup = await Promise.all(TARGETS.map((t) => setUp(urls[t])));
    expect(setup[0]).to.deep.equal(setup[1]);
    const answers = await Promise.all(TARGETS.map((t) => ctl(urls[t], ['--user=root:rootpw', 'get', 'k'])));
    expect(answers[0]).to.equal(answers[1]);
    expect(answers[0]).to.equal('2: Error: rpc error: code = Unknown desc = auth: token signing attempted with verify-only key');
    // a token signed elsewhere with the private key, at the current auth revision (7: the set-up's changes)
    const sign = createSigner({ key: ecPrivPem, algorithm: 'ES256', noTimestamp: true });
    const token = sign({ exp: Math.floor(Date.now() / 1000) + 60, revision: 7, username: 'u' });
    const key = { key: Buffer.from('k').toString('base64') };
    for (const t of TARGETS) {
      // u's token: u may read k and not write it
      expect((await gateway(urls[t], '/v3/kv/range', key, token)).said, t).to.equal('200 ok');
      expect((await gateway(urls[t], '/v3/kv/put', { ...key, value: 'dg==' }, token)).said, t).to.equal('403 7 etcdserver: permission denied');
      expect((await gateway(urls[t], '/v3/kv/range', key, `${token.slice(0, -4)}AAAA`)).said, t).to.equal('401 16 etcdserver: invalid auth token');
    }
  });

  it('bad options stop the member with the reference error', async () => {
    const cases: Array<[string, RegExp]> = [
      ['jwt,sign-method=XX', /auth: invalid auth options/],
      [`jwt,sign-method=RS256`, /auth: missing key data/],
      [`jwt,priv-key=${keys.rsaPriv},sign-method=RS256,ttl=5x`, /auth: invalid auth options/],
      ['unknown', /auth: invalid auth options/],
    ];
    for (const [i, [spec, message]] of cases.entries()) {
      const ports = await freePorts(4);
      for (const [j, target] of TARGETS.entries()) {
        const { proc } = spawnOne(`bad${i}-${target}`, target, [`--auth-token=${spec}`], ports[2 * j], ports[2 * j + 1]);
        const st = await Promise.race([proc.exited, sleep(15000).then(() => undefined)]);
        expect(st?.code, `${target} ${spec}`).to.equal(1);
        expect(proc.log(), `${target} ${spec}`).to.match(message);
      }
    }
  });
});
