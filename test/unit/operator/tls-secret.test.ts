// The checks of a cluster's TLS Secret before the operator uses it: every failure a user can make with the
// Secret is a TlsSecretError with the reason the Warning Event carries and a message that names the fix.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { checkTlsData, TlsSecretError } from '../../../operator/controller/tls.js';
import { makeClusterCerts, type ClusterCerts } from '../../k8s/operator/tls-certs.js';

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

describe('operator: TLS Secret checks', function () {
  this.timeout(30000);
  let dir: string;
  let a: ClusterCerts;
  let b: ClusterCerts;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-tls-secret-'));
    a = await makeClusterCerts(join(dir, 'a'), 'a', 'ns');
    b = await makeClusterCerts(join(dir, 'b'), 'b', 'ns');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const data = (c: Partial<Record<'tls.crt' | 'tls.key' | 'ca.crt', Buffer | string>>) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, b64(v)]));
  const failure = (d: Record<string, string> | undefined): TlsSecretError => {
    try {
      checkTlsData('spec.tls.clientSecret', 's', d, true);
    } catch (e) {
      expect(e).to.be.instanceOf(TlsSecretError);
      return e as TlsSecretError;
    }
    throw new Error('accepted');
  };

  it('accepts a matching pair signed by the CA and returns the PEMs', () => {
    const t = checkTlsData('spec.tls.clientSecret', 's', data({ 'tls.crt': a.cert, 'tls.key': a.key, 'ca.crt': a.ca }), true);
    expect(t.cert.equals(a.cert) && t.key.equals(a.key) && t.ca.equals(a.ca)).to.equal(true);
  });

  it('refuses missing keys, garbage, a foreign key and a certificate of another CA', () => {
    expect(failure(data({ 'tls.crt': a.cert }))).to.include({ reason: 'TLSSecretInvalid', message: 'spec.tls.clientSecret Secret "s" lacks tls.key, ca.crt (it needs tls.crt, tls.key and ca.crt)' });
    expect(failure(undefined).message).to.contain('lacks tls.crt, tls.key, ca.crt');
    expect(failure(data({ 'tls.crt': 'not a certificate', 'tls.key': a.key, 'ca.crt': a.ca })).message).to.contain('tls.crt is not a PEM certificate');
    expect(failure(data({ 'tls.crt': a.cert, 'tls.key': a.key, 'ca.crt': 'junk' })).message).to.contain('ca.crt is not a PEM certificate');
    expect(failure(data({ 'tls.crt': a.cert, 'tls.key': 'junk', 'ca.crt': a.ca })).message).to.contain('tls.key is not a PEM private key');
    expect(failure(data({ 'tls.crt': a.cert, 'tls.key': b.key, 'ca.crt': a.ca })).message).to.contain('tls.key is not the key of tls.crt');
    expect(failure(data({ 'tls.crt': a.cert, 'tls.key': a.key, 'ca.crt': b.ca })).message).to.contain('tls.crt is not signed by ca.crt');
  });

  it('refuses a client certificate that may only serve (the members would refuse the operator)', async () => {
    const s = await makeClusterCerts(join(dir, 'server-only'), 's', 'ns', 'serverAuth');
    const d = data({ 'tls.crt': s.cert, 'tls.key': s.key, 'ca.crt': s.ca });
    expect(failure(d).message).to.contain("extended key usage lacks clientAuth");
    // a peer certificate is not presented by the operator: not checked for clientAuth
    expect(() => checkTlsData('spec.tls.peerSecret', 's', d, false)).to.not.throw();
  });
});
