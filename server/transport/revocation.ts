// Certificate revocation lists as the reference reads them (--client-crl-file, --peer-crl-file): PEM (the first
// "X509 CRL" block) or DER. Like the reference, a list only names serial numbers to refuse: a connection is closed
// after its handshake when a certificate it presented has a listed serial. The list's dates, issuer and signature are
// not checked (OpenSSL's own CRL check would refuse every client once the list's nextUpdate has passed, or when the
// list comes from another CA). The file is read again when it changes, as the reference reads it per connection;
// a file that is not a list is refused at start instead of at the first connection.
import { readFileSync, statSync } from 'node:fs';
import type { PeerCertificate, DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { Logger } from '../log/logger.js';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificateList } from '@peculiar/asn1-x509';

const PEM_CRL = /-----BEGIN X509 CRL-----([A-Za-z0-9+/=\s]+)-----END X509 CRL-----/;

/** The serial numbers a list revokes, as minimal lower-case hex. Throws when the data is not a CRL. */
export function revokedSerials(data: Buffer): Set<string> {
  const pem = PEM_CRL.exec(data.toString('latin1'));
  const der = pem ? Buffer.from(pem[1].replace(/\s+/g, ''), 'base64') : data;
  let list: CertificateList;
  try {
    list = AsnConvert.parse(der, CertificateList);
  } catch (e) {
    throw new Error(`not a certificate revocation list in PEM or DER form (${(e as Error).message})`, { cause: e });
  }
  return new Set((list.tbsCertList.revokedCertificates ?? []).map((r) => serialHex(Buffer.from(r.userCertificate))));
}

function serialHex(bytes: Buffer | string): string {
  const hex = typeof bytes === 'string' ? bytes : bytes.toString('hex');
  return hex.toLowerCase().replace(/^0+(?=.)/, '');
}

/** One --*-crl-file: what it revokes, read again when the file changes. */
export class RevocationList {
  private serials: Set<string>;
  private stamp: string;

  constructor(readonly file: string, data: Buffer = readFileSync(file)) {
    this.serials = revokedSerials(data);
    this.stamp = stampOf(file);
  }

  /** The serial (hex) of the first certificate of the presented chain the list revokes, or undefined. A file that
   *  became unreadable or is no longer a list refuses every certificate, as the reference's per-connection read does. */
  revokedIn(cert: PeerCertificate | DetailedPeerCertificate): string | undefined {
    this.refresh();
    const seen = new Set<PeerCertificate>();
    for (let c: PeerCertificate | undefined = cert; c && c.serialNumber && !seen.has(c); c = (c as DetailedPeerCertificate).issuerCertificate) {
      seen.add(c);
      const serial = serialHex(c.serialNumber);
      if (this.serials.has(serial)) return serial;
    }
    return undefined;
  }

  private refresh(): void {
    const stamp = stampOf(this.file);
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    try {
      this.serials = revokedSerials(readFileSync(this.file));
    } catch {
      this.serials = ALL;
    }
  }
}

/** Stands for "every serial": a list that cannot be read refuses everything. */
const ALL: Set<string> = new (class extends Set<string> {
  override has(): boolean {
    return true;
  }
})();

function stampOf(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  } catch {
    return 'missing';
  }
}

/** Whether a secure connection presented a revoked certificate; logs the refusal as the reference does. */
export function refusedByCrl(crl: RevocationList, socket: TLSSocket, logger: Logger): boolean {
  const serial = crl.revokedIn(socket.getPeerCertificate(true));
  if (serial === undefined) return false;
  logger.warn('rejected connection', { 'remote-addr': `${socket.remoteAddress}:${socket.remotePort}`, error: `transport: certificate serial ${serial} revoked` });
  return true;
}
