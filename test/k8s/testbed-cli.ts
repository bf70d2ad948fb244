// Starts the testbed by hand and keeps it up until Ctrl-C:
//   node dist/test/k8s/testbed-cli.js [workDir]
// then: KUBECONFIG=<workDir>/kubeconfig $(bash test/k8s/build/build.sh | tail -1)/kubectl get nodes
import { startTestbed } from './testbed.js';

const tb = await startTestbed({ workDir: process.argv[2] });
process.stdout.write(`testbed up: KUBECONFIG=${tb.kubeconfigPath} cluster DNS ${tb.node.dnsIp} logs in ${tb.controlPlane.logDir}\n`);
const stop = (): void => { void tb.stop().then(() => process.exit(0), (e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exit(1); }); };
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
