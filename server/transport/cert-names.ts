// --peer-cert-allowed-cn, --peer-cert-allowed-hostname and --client-cert-allowed-hostname: a verified
// certificate of the other side must name one of the allowed common names or SAN hostnames.
import { checkServerIdentity, type PeerCertificate } from 'node:tls';

/** True when no name is required, or the certificate has an allowed CN or a SAN matching an allowed hostname. */
export function certNameAllowed(cert: PeerCertificate | undefined, cns: readonly string[] = [], hostnames: readonly string[] = []): boolean {
  if (cns.length === 0 && hostnames.length === 0) return true;
  if (!cert || Object.keys(cert).length === 0) return false;
  const cn = cert.subject?.CN;
  const names = Array.isArray(cn) ? cn : cn === undefined ? [] : [cn];
  if (names.some((n) => cns.includes(n))) return true;
  // SANs only (as the reference's VerifyHostname): Node would fall back to the CN without a SAN.
  if (!cert.subjectaltname) return false;
  return hostnames.some((h) => checkServerIdentity(h, cert) === undefined);
}

/** The CN and SANs of a certificate, for the log line of a refusal. */
export function certNames(cert: PeerCertificate | undefined): { cn: string; san: string } {
  const cn = cert?.subject?.CN;
  return { cn: Array.isArray(cn) ? cn.join(',') : (cn ?? ''), san: cert?.subjectaltname ?? '' };
}
