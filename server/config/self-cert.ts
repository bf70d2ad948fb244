// --auto-tls / --peer-auto-tls: a self-signed certificate generated at start, as the reference does, into
// <data-dir>/fixtures/client or <data-dir>/fixtures/peer (cert.pem, key.pem), valid for
// --self-signed-cert-validity years, for the hosts of the member's listen URLs. A certificate already there
// is reused. Node 20's crypto cannot issue X.509 certificates, so the openssl command line makes it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../log/logger.js';

export class SelfCertError extends Error {
  readonly code = 'SELF_CERT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SelfCertError';
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
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const unique = [...new Set(hosts.map((h) => h.replace(/^\[(.*)\]$/, '$1')).filter((h) => h !== ''))];
  const san = unique.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  const args = [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile,
    '-days', String(Math.max(1, Math.round(years * 365))),
    '-subj', '/O=etcd',
    '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
    // Peers present the same certificate as TLS clients of each other.
    '-addext', `extendedKeyUsage=${kind === 'peer' ? 'serverAuth,clientAuth' : 'serverAuth'}`,
    ...(san !== '' ? ['-addext', `subjectAltName=${san}`] : []),
  ];
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    const why = err.code === 'ENOENT' ? 'the openssl command is not installed' : (err.stderr?.toString().trim() || err.message);
    throw new SelfCertError(`cannot generate the self-signed ${kind} certificate in ${dir} for --${kind === 'peer' ? 'peer-' : ''}auto-tls: ${why}`, { cause: e });
  }
  logger.info('generated self-signed certificate', { kind, 'cert-path': certFile, 'key-path': keyFile, hosts: unique, 'validity-years': years });
  return { certFile, keyFile };
}
