// A throwaway PKI for the test control plane, made in-process (server/config/x509.ts; no openssl command): a CA,
// the apiserver's serving certificate for 127.0.0.1 and the `kubernetes` Service's ClusterIP, client certificates
// (admin in system:masters, the controller manager's, the kubelet's and the scheduler's identities), and the
// service-account signing key pair. ECDSA P-256 keys (PKCS#8 PEM).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate, type DistinguishedName } from '../../server/config/x509.js';

/** Paths of the files makePki() writes. */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  kcmCert: string;
  kcmKey: string;
  /** The test node's kubelet (system:node:svc-test-node in system:nodes) and kube-scheduler. */
  kubeletCert: string;
  kubeletKey: string;
  schedulerCert: string;
  schedulerKey: string;
  saKey: string;
  saPub: string;
}

const VALIDITY_MS = 30 * 24 * 3600 * 1000;
const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const keyPem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' });

/** Creates a fresh PKI in dir. */
export async function makePki(dir: string): Promise<Pki> {
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => join(dir, n);
  const ca = ecKey();
  const caCert = issueCertificate({
    subject: [['CN', 'svc-test-ca']], publicKey: ca.publicKey, signingKey: ca.privateKey, notAfter: new Date(Date.now() + VALIDITY_MS),
    ca: true, keyUsage: ['keyCertSign', 'cRLSign', 'digitalSignature'], keyIds: true,
  });
  writeFileSync(f('ca.crt'), caCert);
  writeFileSync(f('ca.key'), keyPem(ca.privateKey), { mode: 0o600 });
  const issue = (name: string, subject: DistinguishedName, usage: 'serverAuth' | 'clientAuth', hosts?: string[]) => {
    const k = ecKey();
    writeFileSync(f(`${name}.key`), keyPem(k.privateKey), { mode: 0o600 });
    writeFileSync(f(`${name}.crt`), issueCertificate({
      subject, publicKey: k.publicKey, signingKey: ca.privateKey, issuerCert: caCert, notAfter: new Date(Date.now() + VALIDITY_MS),
      ca: false, keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: [usage], hosts, keyIds: true,
    }));
  };
  issue('apiserver', [['CN', 'kube-apiserver']], 'serverAuth', ['127.0.0.1', '10.0.0.1', 'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc']);
  issue('admin', [['O', 'system:masters'], ['CN', 'svc-test-admin']], 'clientAuth');
  issue('kcm', [['CN', 'system:kube-controller-manager']], 'clientAuth');
  issue('kubelet', [['O', 'system:nodes'], ['CN', 'system:node:svc-test-node']], 'clientAuth');
  issue('scheduler', [['CN', 'system:kube-scheduler']], 'clientAuth');
  const sa = ecKey();
  writeFileSync(f('sa.key'), keyPem(sa.privateKey), { mode: 0o600 });
  writeFileSync(f('sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    dir,
    caCert: f('ca.crt'), caKey: f('ca.key'),
    serverCert: f('apiserver.crt'), serverKey: f('apiserver.key'),
    adminCert: f('admin.crt'), adminKey: f('admin.key'),
    kcmCert: f('kcm.crt'), kcmKey: f('kcm.key'),
    kubeletCert: f('kubelet.crt'), kubeletKey: f('kubelet.key'),
    schedulerCert: f('scheduler.crt'), schedulerKey: f('scheduler.key'),
    saKey: f('sa.key'), saPub: f('sa.pub'),
  };
}
