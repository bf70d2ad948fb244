// The node agent end to end: a StatefulSet applied with kubectl runs as local processes with their own addresses,
// readiness probes and persistent volumes; helm installs a chart.
import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { sharedTestbed } from './fixture.js';
import { installHostsLookup } from './node-agent/hosts.js';
import { waitFor } from './proc.js';
import type { Testbed } from './testbed.js';

// a tiny member: records each boot in its volume, answers /health and /boots on its pod IP
const SERVER = `
const http = require('node:http'), fs = require('node:fs'), path = require('node:path');
const boots = path.join(process.env.DATA_DIR, 'boots');
fs.appendFileSync(boots, process.env.POD_NAME + '\\n');
http.createServer((q, s) => {
  if (q.url === '/health') s.end('ok');
  else if (q.url === '/boots') s.end(fs.readFileSync(boots));
  else { s.statusCode = 404; s.end(); }
}).listen(8080, process.env.POD_IP);
`;

const NS = 'sts-check';

function manifests(): object {
  return {
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
        spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ name: 'http', port: 8080 }] } },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
        spec: {
          replicas: 3, serviceName: 'web', selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              terminationGracePeriodSeconds: 5,
              containers: [{
                name: 'web', image: 'node:20', command: ['node', '-e', SERVER],
                ports: [{ name: 'http', containerPort: 8080 }],
                env: [
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                  { name: 'DATA_DIR', value: '/var/lib/web' },
                ],
                volumeMounts: [{ name: 'data', mountPath: '/var/lib/web' }],
                readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 1 },
                livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
              }],
            },
          },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } } }],
        } },
    ],
  };
}

async function pods(tb: Testbed): Promise<V1Pod[]> {
  return (JSON.parse(await tb.kubectl(['-n', NS, 'get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: V1Pod[] }).items;
}

const isReady = (p: V1Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function boots(url: string): Promise<string[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return (await res.text()).trim().split('\n');
}

describe('k8s testbed: node agent', function () {
  this.timeout(240_000);
  let tb: Testbed;
  before(async () => {
    tb = await sharedTestbed();
    installHostsLookup(tb.hostsFile);
    await tb.kubectl(['create', 'namespace', NS]);
    await waitFor('the default service account', async () =>
      (await tb.kubectl(['-n', NS, 'get', 'serviceaccount', 'default', '-o', 'name'])).trim() ? true : undefined, 60_000);
  });

  it('runs a StatefulSet applied with kubectl: 3 ready pods, distinct pod IPs, names resolvable', async () => {
    await tb.kubectl(['-n', NS, 'apply', '-f', '-'], JSON.stringify(manifests()));
    await tb.kubectl(['-n', NS, 'rollout', 'status', 'statefulset/web', '--timeout=180s']);
    const list = await pods(tb);
    expect(list.map((p) => p.metadata?.name).sort()).to.deep.equal(['web-0', 'web-1', 'web-2']);
    expect(list.every(isReady)).to.equal(true);
    const ips = list.map((p) => p.status?.podIP ?? '');
    expect(new Set(ips).size).to.equal(3);
    for (const ip of ips) expect(ip).to.match(/^127\.0\.\d+\.\d+$/);
    const web0 = list.find((p) => p.metadata?.name === 'web-0');
    expect(web0?.status?.containerStatuses?.[0]).to.include({ ready: true, started: true, restartCount: 0 });
    // the names the operator puts in peer URLs resolve to the pod
    expect(await boots(`http://web-0.web.${NS}.svc:8080/boots`)).to.deep.equal(['web-0']);
    expect(await boots(`http://web-2.web.${NS}.svc.cluster.local:8080/boots`)).to.deep.equal(['web-2']);
  });

  it('brings a deleted pod back with the data of its claim', async () => {
    const before = (await pods(tb)).find((p) => p.metadata?.name === 'web-1');
    await tb.kubectl(['-n', NS, 'delete', 'pod', 'web-1', '--wait=true']);
    const after = await waitFor('web-1 to come back ready', async () => {
      const p = (await pods(tb)).find((x) => x.metadata?.name === 'web-1');
      return p && p.metadata?.uid !== before?.metadata?.uid && isReady(p) ? p : undefined;
    }, 120_000);
    expect(after.status?.podIP).to.be.a('string');
    expect(await boots(`http://${after.status?.podIP}:8080/boots`)).to.deep.equal(['web-1', 'web-1']);
    const claim = (await tb.kubectl(['-n', NS, 'get', 'pvc', 'data-web-1', '-o', 'jsonpath={.status.phase}'])).trim();
    expect(claim).to.equal('Bound');
  });

  it('installs a chart with helm', async () => {
    const chart = join(tb.workDir, 'tiny-chart');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: tiny\nversion: 0.1.0\nappVersion: "1.0"\n');
    writeFileSync(join(chart, 'values.yaml'), 'greeting: hello\n');
    writeFileSync(join(chart, 'templates', 'configmap.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\ndata:\n  greeting: {{ .Values.greeting | quote }}\n');
    await tb.helm(['install', 'tiny', chart, '-n', NS, '--set', 'greeting=hi', '--wait', '--timeout', '60s']);
    const value = (await tb.kubectl(['-n', NS, 'get', 'configmap', 'tiny-greeting', '-o', 'jsonpath={.data.greeting}'])).trim();
    expect(value).to.equal('hi');
    const releases = JSON.parse(await tb.helm(['list', '-n', NS, '-o', 'json'])) as { name: string; status: string }[];
    expect(releases.map((r) => [r.name, r.status])).to.deep.equal([['tiny', 'deployed']]);
    await tb.helm(['uninstall', 'tiny', '-n', NS, '--wait']);
  });
});
