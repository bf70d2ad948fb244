// Starts the testbed by hand (or for `npm run bench -- operator`) and keeps it up until SIGINT/SIGTERM:
//   node dist/test/k8s/testbed-cli.js [workDir] [--control-plane-only] [--apiserver-flag=--name=value ...]
// then: KUBECONFIG=<workDir>/kubeconfig $(bash test/k8s/build/build.sh | tail -1)/kubectl get nodes
// --control-plane-only starts no node (no root needed): pods stay Pending. Its first stdout line starts with
// "testbed up: KUBECONFIG=<path>".
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from './control-plane.js';
import { startTestbed } from './testbed.js';

const args = process.argv.slice(2);
const apiServerFlags = args.filter((a) => a.startsWith('--apiserver-flag=')).map((a) => a.slice('--apiserver-flag='.length));
const controlPlaneOnly = args.includes('--control-plane-only');
const unknown = args.filter((a) => a.startsWith('--') && a !== '--control-plane-only' && !a.startsWith('--apiserver-flag='));
if (unknown.length > 0 || (apiServerFlags.length > 0 && !controlPlaneOnly)) {
  process.stderr.write(`testbed-cli: ${unknown.length > 0 ? `unknown flag ${unknown[0]}` : '--apiserver-flag goes with --control-plane-only'}\nusage: testbed-cli [workDir] [--control-plane-only] [--apiserver-flag=--name=value ...]\n`);
  process.exit(2);
}
const workDir = args.find((a) => !a.startsWith('--'));

let stopTestbed: () => Promise<void>;
if (controlPlaneOnly) {
  const cp = await startControlPlane({ workDir: workDir ?? mkdtempSync(join(tmpdir(), 'svc-cp-')), apiServerFlags });
  process.stdout.write(`testbed up: KUBECONFIG=${cp.kubeconfigPath} (control plane only) logs in ${cp.logDir}\n`);
  stopTestbed = () => cp.stop();
} else {
  const tb = await startTestbed({ workDir });
  process.stdout.write(`testbed up: KUBECONFIG=${tb.kubeconfigPath} cluster DNS ${tb.node.dnsIp} logs in ${tb.controlPlane.logDir}\n`);
  stopTestbed = () => tb.stop();
}
const stop = (): void => { void stopTestbed().then(() => process.exit(0), (e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exit(1); }); };
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
