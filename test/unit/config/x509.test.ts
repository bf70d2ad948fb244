// The in-process X.509 issuer (server/config/x509.ts) behind --auto-tls and the tests' PKIs: certificates node's
// own X.509 parser accepts, chained by signature and name to their issuer, with the requested names and usages;
// CRLs that list the revoked serial numbers.
import { expect } from 'chai';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificateList } from '@peculiar/asn1-x509';
import { issueCertificate, issueCrl } from '../../../server/config/x509.js';

const DAY = 24 * 3600 * 1000;

describe('x509: certificates and CRLs made in-process', () => {
  for (const [kind, opts] of [['rsa', { modulusLength: 2048 }], ['ec', { namedCurve: 'P-256' }], ['ec', { namedCurve: 'P-521' }]] as const) {
    it(`a CA and a leaf, ${kind} ${JSON.stringify(opts)}: signed by the CA, with the names, usages and validity asked for`, () => {
      const ca = generateKeyPairSync(kind as 'ec', opts as { namedCurve: string });
      const caPem = issueCertificate({ subject: [['CN', 'test CA'], ['O', 'svc']], publicKey: ca.publicKey, signingKey: ca.privateKey, notAfter: new Date(Date.now() + DAY), ca: true, keyUsage: ['keyCertSign', 'cRLSign'], keyIds: true });
      const leaf = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const leafPem = issueCertificate({
        subject: [['CN', 'système']], publicKey: leaf.publicKey, signingKey: ca.privateKey, issuerCert: caPem, notAfter: new Date(Date.now() + 3 * DAY), ca: false,
        keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: ['serverAuth', 'clientAuth'], hosts: ['127.0.0.1', '::1', 'example.test'], keyIds: true,
      });
      const c = new X509Certificate(caPem);
      const l = new X509Certificate(leafPem);
      expect([c.ca, c.verify(ca.publicKey), c.subject]).to.deep.equal([true, true, 'CN=test CA\nO=svc']);
      expect([l.ca, l.verify(ca.publicKey), l.checkIssued(c), l.verify(leaf.publicKey)]).to.deep.equal([false, true, true, false]);
      expect(l.subject).to.equal('CN=système');
      expect(l.subjectAltName).to.equal('IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:example.test');
      expect(l.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
      expect(Math.round((Date.parse(l.validTo) - Date.now()) / DAY)).to.equal(3);
      expect(l.publicKey.equals(leaf.publicKey)).to.equal(true);
      // a fresh random serial each time
      const again = new X509Certificate(issueCertificate({ subject: [['CN', 'x']], publicKey: leaf.publicKey, signingKey: ca.privateKey, issuerCert: caPem, notAfter: new Date(Date.now() + DAY), ca: false, keyUsage: ['digitalSignature'] }));
      expect(again.serialNumber).to.not.equal(l.serialNumber);

      const crl = issueCrl(caPem, ca.privateKey, [leafPem]);
      const list = AsnConvert.parse(crl.der, CertificateList);
      expect(list.tbsCertList.revokedCertificates?.map((r) => Buffer.from(r.userCertificate).toString('hex').toUpperCase().replace(/^0+/, ''))).to.deep.equal([l.serialNumber.replace(/^0+/, '')]);
      expect(crl.pem).to.match(/^-----BEGIN X509 CRL-----\n/);
    });
  }
});
