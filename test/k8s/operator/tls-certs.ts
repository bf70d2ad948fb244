// Certificates for a TLS SvcCluster, made in-process (server/config/x509.ts; no openssl command): a CA and one
// certificate for the members (server and client use: members present it to each other and the operator presents
// it to them) naming every pod (*.<cluster>.<ns>.svc), the client Service and 127.0.0.1. ECDSA P-256 keys.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate } from '../../../server/config/x509.js';

export interface ClusterCerts {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** Paths of the same files. */
  files: { ca: string; cert: string; key: string };
}

const VALIDITY_MS = 30 * 24 * 3600 * 1000;
type Usage = 'serverAuth' | 'clientAuth';

const keyPem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' });

/** Issues tls.crt/tls.key for cluster `name` with the CA in dir (ca.crt, ca.key); the usages are kept in member.ext. */
function issueMember(dir: string, name: string, ns: string, usages: Usage[]): ClusterCerts {
  const f = (n: string) => join(dir, n);
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const cert = issueCertificate({
    subject: [['CN', name]], publicKey, signingKey: createPrivateKey(readFileSync(f('ca.key'))), issuerCert: readFileSync(f('ca.crt')),
    notAfter: new Date(Date.now() + VALIDITY_MS), ca: false, keyUsage: ['digitalSignature', 'keyEncipherment'], extKeyUsage: usages, keyIds: true,
    hosts: [`*.${name}.${ns}.svc`, `*.${name}.${ns}.svc.cluster.local`, `${name}-client.${ns}.svc`, 'localhost', '127.0.0.1'],
  });
  writeFileSync(f('member.ext'), JSON.stringify({ ns, usages }));
  writeFileSync(f('tls.key'), keyPem(privateKey), { mode: 0o600 });
  writeFileSync(f('tls.crt'), cert);
  const files = { ca: f('ca.crt'), cert: f('tls.crt'), key: f('tls.key') };
  return { ca: readFileSync(files.ca), cert: readFileSync(files.cert), key: readFileSync(files.key), files };
}

/** A CA and a member certificate for cluster `name` in namespace `ns`, written to dir. */
export async function makeClusterCerts(dir: string, name: string, ns: string, extendedKeyUsage = 'serverAuth,clientAuth'): Promise<ClusterCerts> {
  mkdirSync(dir, { recursive: true });
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(join(dir, 'ca.key'), keyPem(ca.privateKey), { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), issueCertificate({
    subject: [['CN', `${name}-ca`]], publicKey: ca.publicKey, signingKey: ca.privateKey, notAfter: new Date(Date.now() + VALIDITY_MS),
    ca: true, keyUsage: ['keyCertSign', 'cRLSign', 'digitalSignature'], keyIds: true,
  }));
  return issueMember(dir, name, ns, extendedKeyUsage.split(',').map((u) => u.trim() as Usage));
}

/**
 * Renews the member certificate of `makeClusterCerts(dir, ...)` in place, as cert-manager does: a new key and a
 * new certificate signed by the same CA (whose files stay); resolves with the new set.
 */
export async function renewMemberCert(dir: string, name: string): Promise<ClusterCerts> {
  const { ns, usages } = JSON.parse(readFileSync(join(dir, 'member.ext'), 'utf8')) as { ns: string; usages: Usage[] };
  return issueMember(dir, name, ns, usages);
}
