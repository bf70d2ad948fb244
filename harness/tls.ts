// Throwaway PKI for TLS tests, made in-process (server/config/x509.ts, the library --auto-tls uses; no openssl
// command): a CA, a server certificate for 127.0.0.1/::1/localhost and a client certificate (CN chosen by the
// caller), all in one directory, RSA 2048 keys as PKCS#8 PEM.

import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate, issueCrl } from '../server/config/x509.js';

export interface TestPki {
  dir: string;
  /** File paths, for command-line clients such as etcdctl --cacert/--cert/--key. */
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** The same contents, for in-process servers and clients. */
  ca: Buffer;
  serverCert: Buffer;
  serverKey: Buffer;
  clientCert: Buffer;
  clientKey: Buffer;
}

const DAY_MS = 24 * 3600 * 1000;
const LEAF = ['digitalSignature', 'keyEncipherment'] as const;

export interface LeafOptions {
  extKeyUsage: Array<'serverAuth' | 'clientAuth'>;
  /** Subject alternative names (IPs and DNS names). */
  hosts?: string[];
}

/** A certificate of the PKI's CA for `cn`: `<name>.pem` and `<name>-key.pem` in the PKI's dir (paths returned). */
export function makeLeafCert(pki: Pick<TestPki, 'dir'>, name: string, cn: string, opts: LeafOptions): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const caKey = createPrivateKey(readFileSync(join(pki.dir, 'ca-key.pem')));
  const cert = issueCertificate({
    subject: [['CN', cn]], publicKey, signingKey: caKey, issuerCert: readFileSync(join(pki.dir, 'ca.pem')),
    notAfter: new Date(Date.now() + 2 * DAY_MS), ca: false, keyUsage: [...LEAF], extKeyUsage: opts.extKeyUsage, hosts: opts.hosts, keyIds: true,
  });
  const files = { cert: join(pki.dir, `${name}.pem`), key: join(pki.dir, `${name}-key.pem`) };
  writeFileSync(files.cert, cert);
  writeFileSync(files.key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return files;
}

/** A CRL of the PKI's CA revoking the given certificate files: `<name>.pem` (PEM) and `<name>.der` in its dir. */
export function makeCrl(pki: Pick<TestPki, 'dir'>, name: string, revokedCertFiles: string[], validForMs = 30 * DAY_MS): { pem: string; der: string } {
  const crl = issueCrl(readFileSync(join(pki.dir, 'ca.pem')), createPrivateKey(readFileSync(join(pki.dir, 'ca-key.pem'))), revokedCertFiles.map((f) => readFileSync(f)), validForMs);
  const files = { pem: join(pki.dir, `${name}.pem`), der: join(pki.dir, `${name}.der`) };
  writeFileSync(files.pem, crl.pem);
  writeFileSync(files.der, crl.der);
  return files;
}

/** Creates ca.pem, server.pem/server-key.pem (SAN 127.0.0.1, ::1, localhost) and client.pem/client-key.pem in dir. */
export function makeTestPki(dir: string, opts: { clientCommonName?: string } = {}): TestPki {
  const ca = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'ca-key.pem'), ca.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(join(dir, 'ca.pem'), issueCertificate({
    subject: [['CN', 'svc test CA']], publicKey: ca.publicKey, signingKey: ca.privateKey, notAfter: new Date(Date.now() + 2 * DAY_MS),
    ca: true, keyUsage: ['keyCertSign', 'cRLSign', 'digitalSignature'], keyIds: true,
  }));
  makeLeafCert({ dir }, 'server', 'svc test server', { extKeyUsage: ['serverAuth', 'clientAuth'], hosts: ['127.0.0.1', '::1', 'localhost'] });
  makeLeafCert({ dir }, 'client', opts.clientCommonName ?? 'root', { extKeyUsage: ['clientAuth'] });
  const f = (n: string) => join(dir, n);
  return {
    dir,
    caFile: f('ca.pem'),
    serverCertFile: f('server.pem'),
    serverKeyFile: f('server-key.pem'),
    clientCertFile: f('client.pem'),
    clientKeyFile: f('client-key.pem'),
    ca: readFileSync(f('ca.pem')),
    serverCert: readFileSync(f('server.pem')),
    serverKey: readFileSync(f('server-key.pem')),
    clientCert: readFileSync(f('client.pem')),
    clientKey: readFileSync(f('client-key.pem')),
  };
}

/** Another client certificate of the test CA, with CommonName `cn`: `<cn>.pem` and `<cn>-key.pem` in the PKI's dir. */
export function makeClientCert(pki: TestPki, cn: string): { cert: string; key: string } {
  return makeLeafCert(pki, cn, cn, { extKeyUsage: ['clientAuth'] });
}
