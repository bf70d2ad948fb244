// A throwaway PKI for the test control plane, made with the openssl CLI (Node's crypto cannot issue X.509
// certificates): a CA, the apiserver's serving certificate for 127.0.0.1 and the `kubernetes` Service's ClusterIP,
// client certificates (admin in system:masters, the controller manager's, the kubelet's and the scheduler's identities), and the service-account signing key pair.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../../harness/process.js';

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

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

async function issue(dir: string, name: string, subj: string, ext: string): Promise<void> {
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, ext);
  await runCommand(['openssl', 'req', '-new', ...CURVE, '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.csr`), '-subj', subj]);
  await runCommand(['openssl', 'x509', '-req', '-in', join(dir, `${name}.csr`), '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'),
    '-CAcreateserial', '-days', '30', '-sha256', '-extfile', extFile, '-out', join(dir, `${name}.crt`)]);
}

/** Creates a fresh PKI in dir. */
export async function makePki(dir: string): Promise<Pki> {
  mkdirSync(dir, { recursive: true });
  await runCommand(['openssl', 'req', '-x509', ...CURVE, '-nodes', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt'),
    '-days', '30', '-subj', '/CN=svc-test-ca', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature']);
  await issue(dir, 'apiserver', '/CN=kube-apiserver',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' +
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n');
  const client = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';
  await issue(dir, 'admin', '/O=system:masters/CN=svc-test-admin', client);
  await issue(dir, 'kcm', '/CN=system:kube-controller-manager', client);
  await issue(dir, 'kubelet', '/O=system:nodes/CN=system:node:svc-test-node', client);
  await issue(dir, 'scheduler', '/CN=system:kube-scheduler', client);
  await runCommand(['openssl', 'genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', join(dir, 'sa.key')]);
  await runCommand(['openssl', 'pkey', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);
  return {
    dir,
    caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'), serverKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'), adminKey: join(dir, 'admin.key'),
    kcmCert: join(dir, 'kcm.crt'), kcmKey: join(dir, 'kcm.key'),
    kubeletCert: join(dir, 'kubelet.crt'), kubeletKey: join(dir, 'kubelet.key'),
    schedulerCert: join(dir, 'scheduler.crt'), schedulerKey: join(dir, 'scheduler.key'),
    saKey: join(dir, 'sa.key'), saPub: join(dir, 'sa.pub'),
  };
}
