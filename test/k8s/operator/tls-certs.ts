// Certificates for a TLS SvcCluster, made with the openssl CLI: a CA and one certificate for the members
// (server and client use: members present it to each other and the operator presents it to them) naming
// every pod (*.<cluster>.<ns>.svc), the client Service and 127.0.0.1.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../../../harness/process.js';

export interface ClusterCerts {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** Paths of the same files. */
  files: { ca: string; cert: string; key: string };
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

/** A CA and a member certificate for cluster `name` in namespace `ns`, written to dir. */
export async function makeClusterCerts(dir: string, name: string, ns: string, extendedKeyUsage = 'serverAuth,clientAuth'): Promise<ClusterCerts> {
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => join(dir, n);
  await runCommand(['openssl', 'req', '-x509', ...CURVE, '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '30', '-subj', `/CN=${name}-ca`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
  writeFileSync(f('member.ext'), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=${extendedKeyUsage}\n` +
    `subjectAltName=DNS:*.${name}.${ns}.svc,DNS:*.${name}.${ns}.svc.cluster.local,DNS:${name}-client.${ns}.svc,DNS:localhost,IP:127.0.0.1\n`);
  await runCommand(['openssl', 'req', '-new', ...CURVE, '-nodes', '-keyout', f('tls.key'), '-out', f('member.csr'), '-subj', `/CN=${name}`]);
  await runCommand(['openssl', 'x509', '-req', '-in', f('member.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '30', '-sha256',
    '-extfile', f('member.ext'), '-out', f('tls.crt')]);
  const files = { ca: f('ca.crt'), cert: f('tls.crt'), key: f('tls.key') };
  return { ca: readFileSync(files.ca), cert: readFileSync(files.cert), key: readFileSync(files.key), files };
}

/**
 * Renews the member certificate of `makeClusterCerts(dir, ...)` in place, as cert-manager does: a new key and a
 * new certificate signed by the same CA (whose files stay); resolves with the new set.
 */
export async function renewMemberCert(dir: string, name: string): Promise<ClusterCerts> {
  const f = (n: string) => join(dir, n);
  await runCommand(['openssl', 'req', '-new', ...CURVE, '-nodes', '-keyout', f('tls.key'), '-out', f('member.csr'), '-subj', `/CN=${name}`]);
  await runCommand(['openssl', 'x509', '-req', '-in', f('member.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '30', '-sha256',
    '-extfile', f('member.ext'), '-out', f('tls.crt')]);
  const files = { ca: f('ca.crt'), cert: f('tls.crt'), key: f('tls.key') };
  return { ca: readFileSync(files.ca), cert: readFileSync(files.cert), key: readFileSync(files.key), files };
}
