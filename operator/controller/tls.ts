// The TLS Secrets of a cluster (spec.tls.clientSecret, spec.tls.peerSecret), read and checked before anything
// is applied: the members mount them (tls.crt, tls.key, ca.crt) and the operator talks to the members with
// the client Secret's certificate (they run with --client-cert-auth=true). A Secret that is missing or does
// not hold a usable key pair would leave pods stuck or crash-looping; it is reported instead (TlsSecretError).
// Secrets are read with a GET on each reconcile, never listed or watched: the operator needs the few it is
// pointed at, and a re-read every resync picks up a renewed certificate.
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { SvcClusterSpec } from '../api/types.js';
import type { MemberTls } from '../members/index.js';
import { isStatus, type KubeApi } from '../runtime/kubernetes/kube-api.js';

/** Event reasons of a TLS Secret the cluster cannot use. */
export type TlsSecretReason = 'TLSSecretMissing' | 'TLSSecretUnreadable' | 'TLSSecretInvalid';

/** A TLS Secret the cluster cannot use; `reason` is the Warning Event's reason. */
export class TlsSecretError extends Error {
  constructor(readonly reason: TlsSecretReason, message: string) {
    super(message);
    this.name = 'TlsSecretError';
  }
}

const KEYS = ['tls.crt', 'tls.key', 'ca.crt'] as const;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** Checks the key pair and CA of a Secret's data (base64 values, as the API returns them); returns the PEMs. */
export function checkTlsData(field: string, secretName: string, data: Record<string, string> | undefined, forClient: boolean, now = new Date()): MemberTls {
  const where = `${field} Secret "${secretName}"`;
  const pem: Partial<Record<(typeof KEYS)[number], Buffer>> = {};
  const absent = KEYS.filter((k) => !data?.[k]);
  if (absent.length > 0) throw new TlsSecretError('TLSSecretInvalid', `${where} lacks ${absent.join(', ')} (it needs tls.crt, tls.key and ca.crt)`);
  for (const k of KEYS) pem[k] = Buffer.from(data![k], 'base64');
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(pem['tls.crt']!);
  } catch (e) {
    throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.crt is not a PEM certificate (${(e as Error).message})`);
  }
  try {
    ca = new X509Certificate(pem['ca.crt']!);
  } catch (e) {
    throw new TlsSecretError('TLSSecretInvalid', `${where}: ca.crt is not a PEM certificate (${(e as Error).message})`);
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(pem['tls.key']!));
  } catch (e) {
    throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.key is not a PEM private key (${(e as Error).message})`);
  }
  if (!matches) throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.key is not the key of tls.crt`);
  if (!cert.verify(ca.publicKey)) throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.crt is not signed by ca.crt`);
  if (new Date(cert.validTo) <= now) throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.crt expired on ${cert.validTo}`);
  // The operator presents this certificate to members that check it: it must be usable as a client's.
  if (forClient && Array.isArray(cert.keyUsage) && !cert.keyUsage.includes(CLIENT_AUTH)) {
    throw new TlsSecretError('TLSSecretInvalid', `${where}: tls.crt's extended key usage lacks clientAuth (the operator authenticates to the members with it)`);
  }
  return { ca: pem['ca.crt']!, cert: pem['tls.crt']!, key: pem['tls.key']! };
}

async function readSecret(api: KubeApi, namespace: string, field: string, name: string): Promise<V1Secret> {
  try {
    return await api.core.readNamespacedSecret({ namespace, name });
  } catch (e) {
    if (isStatus(e, 404)) throw new TlsSecretError('TLSSecretMissing', `${field} Secret "${name}" does not exist in namespace ${namespace}`);
    if (isStatus(e, 403)) throw new TlsSecretError('TLSSecretUnreadable', `${field} Secret "${name}" cannot be read: the operator may not get Secrets in namespace ${namespace} (its RBAC grants get on secrets)`);
    throw e;
  }
}

/**
 * Reads and checks the cluster's TLS Secrets; resolves with the client TLS material the operator uses (undefined
 * without spec.tls.clientSecret) and a fingerprint of both Secrets' certificates and keys (undefined without TLS):
 * a Secret renewed in place gives a new fingerprint, which the members are rolled to. Rejects with a
 * TlsSecretError when a Secret is missing or unusable.
 */
export async function readClusterTls(api: KubeApi, namespace: string, spec: SvcClusterSpec): Promise<{ client?: MemberTls; fingerprint?: string; expiry: CertificateExpiry[] }> {
  let client: MemberTls | undefined;
  const h = createHash('sha256');
  const expiry: CertificateExpiry[] = [];
  const notAfter = (pem: Buffer) => Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000);
  if (spec.tls?.clientSecret) {
    const s = await readSecret(api, namespace, 'spec.tls.clientSecret', spec.tls.clientSecret);
    client = checkTlsData('spec.tls.clientSecret', spec.tls.clientSecret, s.data, true);
    h.update(`client\0${client.ca}\0${client.cert}\0${client.key}\0`);
    expiry.push({ secret: spec.tls.clientSecret, use: 'client', notAfter: notAfter(client.cert) });
  }
  if (spec.tls?.peerSecret) {
    const s = await readSecret(api, namespace, 'spec.tls.peerSecret', spec.tls.peerSecret);
    const peer = checkTlsData('spec.tls.peerSecret', spec.tls.peerSecret, s.data, false);
    h.update(`peer\0${peer.ca}\0${peer.cert}\0${peer.key}\0`);
    expiry.push({ secret: spec.tls.peerSecret, use: 'peer', notAfter: notAfter(peer.cert) });
  }
  return { client, fingerprint: spec.tls?.clientSecret || spec.tls?.peerSecret ? h.digest('hex').slice(0, 16) : undefined, expiry };
}

/** When a TLS Secret's certificate expires (seconds since the epoch): the metric the chart's expiry alert reads. */
export interface CertificateExpiry {
  secret: string;
  use: 'client' | 'peer';
  notAfter: number;
}

/** A fingerprint of TLS material: a new one means new member clients. */
export function tlsKey(tls: MemberTls | undefined): string {
  return tls ? createHash('sha256').update(tls.ca).update(tls.cert).update(tls.key).digest('hex') : 'plain';
}
