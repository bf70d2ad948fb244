// --auto-tls / --peer-auto-tls: a self-signed certificate generated at start, as the reference does, into
// <data-dir>/fixtures/client or <data-dir>/fixtures/peer (cert.pem, key.pem), for the hosts of the member's listen
// URLs. A certificate already there is reused. Made in-process (x509.ts) with the reference's properties: an ECDSA
// P-521 key (PEM "EC PRIVATE KEY", mode 0600), signed with ECDSA-SHA512, subject O=etcd, a random 128-bit serial,
// valid from now for --self-signed-cert-validity years of 365 days, key usage digital signature and key
// encipherment, extended key usage server auth, basic constraints CA:FALSE, the hosts as IP or DNS names.
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/logger.js';
import { issueCertificate } from './x509.js';
import { CodedError } from '../coded-error.js';

export class SelfCertError extends CodedError<'SELF_CERT'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SELF_CERT', message, options);
  }
}

export interface SelfCert {
  certFile: string;
  keyFile: string;
}

/** Generates (or reuses) the self-signed certificate of one kind in dir. */
export function selfCert(logger: Logger, dir: string, hosts: string[], years: number, kind: 'client' | 'peer'): SelfCert {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    logger.info('using existing self-signed certificates', { 'cert-path': certFile, 'key-path': keyFile });
    return { certFile, keyFile };
  }
  const unique = [...new Set(hosts.map((h) => h.replace(/^\[(.*)\]$/, '$1')).filter((h) => h !== ''))];
  const notBefore = new Date();
  const notAfter = new Date(notBefore.getTime() + years * 365 * 24 * 3600 * 1000);
  logger.warn('automatically generate certificates', { kind, 'certificate-validity-bound-not-after': notAfter.toISOString() });
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const cert = issueCertificate({
      subject: [['O', 'etcd']], publicKey, signingKey: privateKey, notBefore, notAfter, ca: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: ['serverAuth'], hosts: unique,
    });
    writeFileSync(certFile, cert);
    logger.info('created cert file', { path: certFile });
    writeFileSync(keyFile, privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    logger.info('created key file', { path: keyFile });
  } catch (e) {
    throw new SelfCertError(`cannot generate the self-signed ${kind} certificate in ${dir} for --${kind === 'peer' ? 'peer-' : ''}auto-tls: ${(e as Error).message}`, { cause: e });
  }
  logger.info('generated self-signed certificate', { kind, 'cert-path': certFile, 'key-path': keyFile, hosts: unique, 'validity-years': years });
  return { certFile, keyFile };
}
