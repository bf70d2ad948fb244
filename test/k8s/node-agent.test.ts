// The node agent's pure parts and the hosts-file resolver hook, without a cluster.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { expandVars, needsPrivateMount, parseImage, planContainer, rewriteHostPaths, svcVersionOf } from './node-agent/container-command.js';
import { parseHosts, writeHosts } from './node-agent/hosts.js';

describe('k8s node agent: container mapping', () => {
  it('reads the svc version from the image tag', () => {
    expect(svcVersionOf('svc:v3.4.34')).to.equal('3.4.34');
    expect(svcVersionOf('registry.local:5000/team/svc:v3.5.17')).to.equal('3.5.17');
    expect(svcVersionOf('node:20')).to.equal(undefined);
    expect(parseImage('r:5000/a/svc:v1.2.3@sha256:abc')).to.deep.equal({ name: 'svc', tag: 'v1.2.3' });
  });

  it('expands $(VAR) like the kubelet and rewrites mount paths and the wildcard address', () => {
    expect(expandVars('--name=$(POD_NAME) $$(KEEP) $(MISSING)', { POD_NAME: 'm-0' })).to.equal('--name=m-0 $(KEEP) $(MISSING)');
    const mounts = new Map([['/var/lib/svc', '/w/pv/pvc-1'], ['/var/lib/svc/wal', '/w/pv/pvc-2']]);
    expect(rewriteHostPaths('--data-dir=/var/lib/svc/data', mounts, '127.0.1.3')).to.equal('--data-dir=/w/pv/pvc-1/data');
    expect(rewriteHostPaths('/var/lib/svc/wal', mounts, '127.0.1.3')).to.equal('/w/pv/pvc-2');
    expect(rewriteHostPaths('/var/lib/svcx', mounts, '127.0.1.3')).to.equal('/var/lib/svcx');
    expect(rewriteHostPaths('http://0.0.0.0:2379', mounts, '127.0.1.3')).to.equal('http://127.0.1.3:2379');
  });

  it('runs an svc container as node <repo>/bin/svc with env from the pod', async () => {
    const pod: V1Pod = { metadata: { name: 'm-1', namespace: 'ns1', uid: 'u1' }, spec: { containers: [] } };
    const plan = await planContainer(pod, {
      name: 'svc', image: 'example/svc:v3.4.34',
      args: ['--name=$(POD_NAME)', '--data-dir=/var/lib/svc/data', '--listen-client-urls=http://$(POD_IP):2379'],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cm', key: 'hello' } } },
      ],
    }, {
      repoRoot: '/repo', podIP: '127.0.1.7', nodeName: 'n', mounts: new Map([['/var/lib/svc', '/w/pv/p']]),
      baseEnv: { PATH: '/bin' },
      resolveRef: (kind, ns, name) => Promise.resolve(kind === 'ConfigMap' && ns === 'ns1' && name === 'cm' ? { hello: 'hi' } : undefined),
    });
    expect(plan.argv).to.deep.equal([process.execPath, '/repo/bin/svc', '--name=m-1', '--data-dir=/w/pv/p/data', '--listen-client-urls=http://127.0.1.7:2379']);
    expect(plan.env).to.include({ SVC_VERSION: '3.4.34', POD_NAME: 'm-1', POD_IP: '127.0.1.7', NS: 'ns1', GREETING: 'hi', PATH: '/bin' });
    const explicit = await planContainer(pod, { name: 'c', image: 'svc:v3.5.0', command: ['/usr/local/bin/svc'], args: ['--version'] },
      { repoRoot: '/repo', podIP: '127.0.1.7', nodeName: 'n', mounts: new Map(), baseEnv: {}, resolveRef: () => Promise.resolve(undefined) });
    expect(explicit.argv).to.deep.equal([process.execPath, '/repo/bin/svc', '--version']);
    const operator = await planContainer(pod, { name: 'backup', image: 'svc:v3.5.21', command: ['svc-operator'], args: ['backup', '--record=/dev/termination-log'] },
      { repoRoot: '/repo', podIP: '127.0.1.7', nodeName: 'n', mounts: new Map([['/dev/termination-log', '/w/pods/p/termination/backup']]), baseEnv: {}, resolveRef: () => Promise.resolve(undefined) });
    expect(operator.argv).to.deep.equal([process.execPath, '/repo/bin/svc-operator', 'backup', '--record=/w/pods/p/termination/backup']);
  });

  it('runs svc-operator as node <repo>/bin/svc-operator; a service-account mount goes to a private mount namespace', async () => {
    const pod: V1Pod = { metadata: { name: 'op', namespace: 'ops', uid: 'u2' }, spec: { containers: [] } };
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    const plan = await planContainer(pod, { name: 'operator', image: 'svc:v3.5.21', command: ['svc-operator'], args: ['run', '--snapshot-dir=/snap', '--token=' + sa] }, {
      repoRoot: '/repo', podIP: '127.0.1.8', nodeName: 'n', mounts: new Map([['/snap', '/w/v/snap'], [sa, '/w/v/kube-api-access']]),
      baseEnv: {}, resolveRef: () => Promise.resolve(undefined),
    });
    expect(plan.argv[0]).to.equal('unshare');
    expect(plan.argv.slice(0, 8)).to.include.members(['--mount', '--propagation', 'private', '/bin/sh']);
    expect(plan.argv.slice(-5)).to.deep.equal([process.execPath, '/repo/bin/svc-operator', 'run', '--snapshot-dir=/w/v/snap', '--token=' + sa]);
    expect(plan.argv[plan.argv.indexOf('-c') + 1]).to.contain(`mount --bind '/w/v/kube-api-access' '${sa}'`);
    expect(plan.privateMounts).to.deep.equal(new Map([[sa, '/w/v/kube-api-access']]));
    expect(needsPrivateMount('/run/secrets/x')).to.equal(true);
    expect(needsPrivateMount('/var/run/secretsx')).to.equal(false);
  });
});

describe('k8s node agent: hosts file', () => {
  it('parses and writes "ip name" lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-hosts-'));
    const file = join(dir, 'hosts');
    writeHosts(file, new Map([['web-0.web.ns.svc', ['127.0.1.1']], ['web.ns.svc', ['127.0.1.1', '127.0.1.2']]]));
    const t = parseHosts('# c\n127.0.1.9 a.b.svc A.B.svc.cluster.local.\n');
    expect(t.get('a.b.svc.cluster.local')).to.deep.equal(['127.0.1.9']);
    expect(parseHosts(readFileSync(file, 'utf8')).get('web.ns.svc')).to.deep.equal(['127.0.1.1', '127.0.1.2']);
  });

  it('makes dns.lookup of a process started with the hook resolve the names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-hosts-'));
    const file = join(dir, 'hosts');
    writeFileSync(file, '127.0.1.5 m-0.peers.ns.svc\n127.0.1.6 m-1.peers.ns.svc\n');
    const hook = pathToFileURL(join(import.meta.dirname, 'node-agent', 'hosts-hook.js')).href;
    const script = `import dns from 'node:dns'; import { lookup } from 'node:dns/promises';
      dns.lookup('m-0.peers.ns.svc', (e, a) => { console.log(a); lookup('M-1.peers.ns.svc.', { all: true }).then((r) => console.log(r[0].address)); });`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, SVC_HOSTS_FILE: file, NODE_OPTIONS: `--import=${hook}` }, encoding: 'utf8', timeout: 20_000,
    });
    expect(r.stderr).to.equal('');
    expect(r.stdout.trim().split('\n')).to.deep.equal(['127.0.1.5', '127.0.1.6']);
  });
});
