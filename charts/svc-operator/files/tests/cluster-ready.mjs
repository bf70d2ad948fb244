// `helm test`: creates an SvcCluster, waits until the operator reports it Running with every member ready and
// Available=True, then deletes it. Node built-ins only (it runs in the operator image); talks to the apiserver
// with the Pod's service account. Exit status 0 when the cluster became ready, 1 otherwise.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
const token = readFileSync(`${SA}/token`, 'utf8').trim();
const ca = readFileSync(`${SA}/ca.crt`);
const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port, TEST_NAMESPACE: ns, TEST_CLUSTER: name, TEST_VERSION: version } = process.env;
const labels = JSON.parse(process.env.TEST_LABELS || '{}');
const deadline = Date.now() + Number(process.env.TEST_TIMEOUT_SECONDS || 300) * 1000;
const base = `/apis/svc.dev/v1alpha1/namespaces/${ns}/svcclusters`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (msg) => process.stdout.write(`${new Date().toISOString()} ${msg}\n`);

function call(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method, ca, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function gone() {
  await call('DELETE', `${base}/${name}`);
  while ((await call('GET', `${base}/${name}`)).status !== 404) {
    if (Date.now() > deadline) throw new Error(`${ns}/${name} still exists`);
    await sleep(1000);
  }
}

let ok = false;
try {
  await gone(); // a leftover of an earlier run
  const created = await call('POST', base, { apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name, labels }, spec: { version, replicas: 1 } });
  if (created.status !== 201) throw new Error(`create ${ns}/${name}: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  log(`created SvcCluster ${ns}/${name} (${version}, 1 member); waiting for the operator`);
  let last = '';
  while (!ok) {
    if (Date.now() > deadline) throw new Error(`${ns}/${name} not ready in time (last: ${last || 'no status'})`);
    const st = (await call('GET', `${base}/${name}`)).body?.status ?? {};
    const available = st.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    const now = `phase=${st.phase ?? ''} ready=${st.ready ?? ''} available=${available === true}`;
    if (now !== last) log(now);
    last = now;
    ok = st.phase === 'Running' && st.ready === '1/1' && available === true;
    if (!ok) await sleep(2000);
  }
  log(`${ns}/${name} is ready`);
} catch (e) {
  log(`FAILED: ${e.message}`);
} finally {
  await gone().catch((e) => log(`cleanup: ${e.message}`));
}
process.exitCode = ok ? 0 : 1;
