// Throwaway PKI for TLS tests, made with the openssl command line: a CA, a server certificate for
// 127.0.0.1/localhost and a client certificate (CN chosen by the caller), all in one directory.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Creates ca.pem, server.pem/server-key.pem (SAN 127.0.0.1, ::1, localhost) and client.pem/client-key.pem in dir. */
export function makeTestPki(dir: string, opts: { clientCommonName?: string } = {}): TestPki {
  const days = '2';
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', days, '-subj', '/CN=svc test CA'], dir);
  const leaf = (name: string, cn: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
    openssl(
      ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${name}.pem`, '-days', days, '-extfile', `${name}.ext`],
      dir,
    );
  };
  leaf('server', 'svc test server', 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  leaf('client', opts.clientCommonName ?? 'root', 'extendedKeyUsage=clientAuth\n');
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
  writeFileSync(join(pki.dir, `${cn}.ext`), 'extendedKeyUsage=clientAuth\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${cn}-key.pem`, '-out', `${cn}.csr`, '-subj', `/CN=${cn}`], pki.dir);
  openssl(['x509', '-req', '-in', `${cn}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${cn}.pem`, '-days', '2', '-extfile', `${cn}.ext`], pki.dir);
  return { cert: join(pki.dir, `${cn}.pem`), key: join(pki.dir, `${cn}-key.pem`) };
}
