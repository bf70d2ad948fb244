// Certificate revocation lists as the reference reads them (--client-crl-file, --peer-crl-file): PEM ("X509 CRL"
// blocks) or DER (one list, as `openssl crl -outform DER` writes it). TLS contexts take PEM, so a DER list is
// wrapped into a PEM block here; a file that is neither is refused at start instead of at the first handshake.
import { createSecureContext } from 'node:tls';

const PEM_CRL = /-----BEGIN X509 CRL-----/;

/** The list in PEM form: a PEM file as it is, a DER one wrapped. Throws when it is not a CRL. */
export function crlAsPem(data: Buffer): Buffer {
  const pem = PEM_CRL.test(data.toString('latin1')) ? data : derToPem(data);
  try {
    createSecureContext({ crl: pem });
  } catch (e) {
    throw new Error(`not a certificate revocation list in PEM or DER form (${(e as Error).message})`, { cause: e });
  }
  return pem;
}

function derToPem(der: Buffer): Buffer {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return Buffer.from(`-----BEGIN X509 CRL-----\n${lines.join('\n')}\n-----END X509 CRL-----\n`, 'latin1');
}
