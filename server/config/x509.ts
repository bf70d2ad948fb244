// X.509 certificates made in-process (no openssl command): the structures are @peculiar/asn1-x509's (the RFC 5280
// ASN.1 schema), keys and signatures node's crypto. Synchronous, so a member makes its --auto-tls certificates
// while it reads its flags, and the test PKI stays a plain function. Used by self-cert.ts and the tests' PKIs.
import { createHash, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier, AttributeTypeAndValue, AttributeValue, AuthorityKeyIdentifier, BasicConstraints, Certificate, ExtendedKeyUsage,
  Extension, Extensions, GeneralName, KeyIdentifier, KeyUsage, KeyUsageFlags, Name, RelativeDistinguishedName, SubjectAlternativeName,
  SubjectKeyIdentifier, SubjectPublicKeyInfo, TBSCertificate, Validity, Version, id_ce_authorityKeyIdentifier, id_ce_basicConstraints,
  id_ce_extKeyUsage, id_ce_keyUsage, id_ce_subjectAltName, id_ce_subjectKeyIdentifier, id_kp_clientAuth, id_kp_serverAuth,
  CertificateList, TBSCertList, RevokedCertificate, Time,
} from '@peculiar/asn1-x509';

/** Subject attributes by their short names, in order (e.g. [['O', 'etcd']], [['CN', 'svc test CA']]). */
export type DistinguishedName = Array<[keyof typeof ATTRIBUTE_OIDS, string]>;

const ATTRIBUTE_OIDS = { CN: '2.5.4.3', O: '2.5.4.10', OU: '2.5.4.11', C: '2.5.4.6' } as const;

export type KeyUsageName = keyof typeof KeyUsageFlags;

export interface CertificateSpec {
  subject: DistinguishedName;
  /** The certified key (its public half). */
  publicKey: KeyObject;
  /** The key that signs: the issuer's, or the subject's own for a self-signed certificate. */
  signingKey: KeyObject;
  /** The issuer's certificate (PEM); absent: self-signed. Its subject becomes the issuer name, byte for byte. */
  issuerCert?: string | Buffer;
  notBefore?: Date;
  notAfter: Date;
  /** basicConstraints: CA:TRUE (critical) or CA:FALSE. */
  ca: boolean;
  keyUsage: KeyUsageName[];
  extKeyUsage?: Array<'serverAuth' | 'clientAuth'>;
  /** Subject alternative names: IP addresses as iPAddress, anything else as dNSName. */
  hosts?: string[];
  /** Subject and authority key identifiers (as openssl adds them). */
  keyIds?: boolean;
}

/** A new certificate, PEM. */
export function issueCertificate(spec: CertificateSpec): string {
  const spki = AsnConvert.parse(spec.publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);
  const issuer = spec.issuerCert ? parseCertificate(spec.issuerCert) : undefined;
  const sigAlg = signatureAlgorithm(spec.signingKey);
  const extensions: Extension[] = [
    extension(id_ce_keyUsage, true, new KeyUsage(spec.keyUsage.reduce((f, u) => f | KeyUsageFlags[u], 0))),
  ];
  // in the order Go writes them: key usage, extended key usage, basic constraints, key ids, alternative names
  if (spec.extKeyUsage?.length) {
    extensions.push(extension(id_ce_extKeyUsage, false, new ExtendedKeyUsage(spec.extKeyUsage.map((u) => (u === 'serverAuth' ? id_kp_serverAuth : id_kp_clientAuth)))));
  }
  extensions.push(extension(id_ce_basicConstraints, true, new BasicConstraints({ cA: spec.ca })));
  if (spec.keyIds) {
    extensions.push(extension(id_ce_subjectKeyIdentifier, false, new SubjectKeyIdentifier(keyId(spki))));
    const authority = issuer ? keyId(issuer.tbsCertificate.subjectPublicKeyInfo) : keyId(spki);
    extensions.push(extension(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(authority) })));
  }
  const hosts = spec.hosts ?? [];
  if (hosts.length > 0) {
    extensions.push(extension(id_ce_subjectAltName, false, new SubjectAlternativeName(hosts.map((h) => new GeneralName(isIP(h) ? { iPAddress: h } : { dNSName: h })))));
  }
  const subject = name(spec.subject);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber(),
    signature: sigAlg,
    issuer: issuer ? issuer.tbsCertificate.subject : subject,
    validity: new Validity({ notBefore: spec.notBefore ?? new Date(), notAfter: spec.notAfter }),
    subject,
    subjectPublicKeyInfo: spki,
    extensions: new Extensions(extensions),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: sigAlg, signatureValue: toArrayBuffer(signWith(spec.signingKey, tbsDer)) });
  return pem('CERTIFICATE', Buffer.from(AsnConvert.serialize(cert)));
}

/** A CRL of `issuerCert` (signed with its key) listing the given certificates (PEM) as revoked; PEM and DER. */
export function issueCrl(issuerCert: string | Buffer, issuerKey: KeyObject, revoked: Array<string | Buffer>, validForMs = 24 * 3600 * 1000): { pem: string; der: Buffer } {
  const issuer = parseCertificate(issuerCert);
  const sigAlg = signatureAlgorithm(issuerKey);
  const now = new Date();
  const tbs = new TBSCertList({
    version: Version.v2,
    signature: sigAlg,
    issuer: issuer.tbsCertificate.subject,
    thisUpdate: new Time(now),
    nextUpdate: new Time(new Date(now.getTime() + validForMs)),
    revokedCertificates: revoked.map((c) => new RevokedCertificate({ userCertificate: parseCertificate(c).tbsCertificate.serialNumber, revocationDate: new Time(now) })),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const crl = new CertificateList({ tbsCertList: tbs, signatureAlgorithm: sigAlg, signature: toArrayBuffer(signWith(issuerKey, tbsDer)) });
  const der = Buffer.from(AsnConvert.serialize(crl));
  return { pem: pem('X509 CRL', der), der };
}

function parseCertificate(c: string | Buffer): Certificate {
  return AsnConvert.parse(new X509Certificate(c).raw, Certificate);
}

function extension(id: string, critical: boolean, value: unknown): Extension {
  return new Extension({ extnID: id, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

/** PrintableString when the text allows it (as Go and openssl write names), else UTF8String. */
function name(dn: DistinguishedName): Name {
  return new Name(
    dn.map(([attr, value]) => {
      const v = /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value) ? new AttributeValue({ printableString: value }) : new AttributeValue({ utf8String: value });
      return new RelativeDistinguishedName([new AttributeTypeAndValue({ type: ATTRIBUTE_OIDS[attr], value: v })]);
    }),
  );
}

/** A random positive 128-bit serial number. */
function serialNumber(): ArrayBuffer {
  const b = randomBytes(16);
  b[0] = (b[0] & 0x7f) | 0x01;
  return toArrayBuffer(b);
}

/** The SHA-1 of the subject public key bits (RFC 5280 4.2.1.2, method 1). */
function keyId(spki: SubjectPublicKeyInfo): ArrayBuffer {
  return toArrayBuffer(createHash('sha1').update(Buffer.from(spki.subjectPublicKey)).digest());
}

const EC_HASH: Record<string, { hash: string; oid: string }> = {
  prime256v1: { hash: 'sha256', oid: '1.2.840.10045.4.3.2' },
  secp384r1: { hash: 'sha384', oid: '1.2.840.10045.4.3.3' },
  secp521r1: { hash: 'sha512', oid: '1.2.840.10045.4.3.4' },
};

/** The signature algorithm for a key, as Go picks it: ECDSA with the curve's hash, RSA PKCS#1 v1.5 with SHA-256. */
function signatureAlgorithm(key: KeyObject): AlgorithmIdentifier {
  if (key.asymmetricKeyType === 'ec') {
    const a = EC_HASH[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (!a) throw new Error(`x509: unsupported curve ${key.asymmetricKeyDetails?.namedCurve}`);
    return new AlgorithmIdentifier({ algorithm: a.oid });
  }
  if (key.asymmetricKeyType === 'rsa') return new AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null });
  throw new Error(`x509: unsupported key type ${key.asymmetricKeyType}`);
}

function signWith(key: KeyObject, data: Buffer): Buffer {
  const hash = key.asymmetricKeyType === 'ec' ? EC_HASH[key.asymmetricKeyDetails!.namedCurve!].hash : 'sha256';
  return sign(hash, data, key);
}

function toArrayBuffer(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
