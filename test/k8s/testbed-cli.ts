// Starts the testbed by hand and keeps it up until Ctrl-C:
//   node dist/test/k8s/testbed-cli.js [workDir]
// then: KUBECONFIG=<workDir>/kubeconfig $(bash test/k8s/build/build.sh)/kubectl get nodes
import { startTestbed } from './testbed.js';

const tb = await startTestbed({ workDir: process.argv[2] });
process.stdout.write(`testbed up: KUBECONFIG=${tb.kubeconfigPath} SVC_HOSTS_FILE=${tb.hostsFile} logs in ${tb.controlPlane.logDir}\n`);
const stop = (): void => { void tb.stop().then(() => process.exit(0)); };
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
