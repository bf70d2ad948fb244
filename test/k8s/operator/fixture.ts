// useOperator(namespace): the before/after of an operator test file, in one call inside its describe:
//   const op = useOperator('svcc-x');          // op.tb, op.ctl, op.logs; op.stopController() / op.startController()
// before: the shared testbed, its pods' names resolvable here (through its CoreDNS), the CRD, the namespaces (Pod
// Security restricted) and, unless `controller: false`, an in-process controller started. After a failed test: what
// explains it saved under <work>/logs/failed/<test>/ (the controller's log, the namespaces' objects and Events, the
// logs of operator pods with the previous container's, since a failing probe restarts it and takes its log along).
// after: the controller stopped, the chart's releases in `chartNamespace` uninstalled, the namespaces removed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import type { Controller, ControllerOptions } from '../../../operator/controller/controller.js';
import { sharedTestbed } from '../fixture.js';
import { createRestrictedNamespace } from '../namespaces.js';
import { installClusterDns } from '../node/cluster-dns.js';
import type { Testbed } from '../testbed.js';
import { installCrd, removeNamespace, testController } from './helpers.js';

export interface UseOperatorOptions {
  /** The in-process controller's options over the test defaults; false: none (the test runs the operator's pod). */
  controller?: Partial<ControllerOptions> | false;
  /** More namespaces made and removed with `namespace`. */
  namespaces?: string[];
  /** Where the test installs the chart: made and removed too, its Helm releases uninstalled after the suite, the logs of its pods saved when a test fails. */
  chartNamespace?: string;
}

/** What useOperator gives a test file. */
export interface OperatorFixture {
  /** The shared testbed (from the suite's before hook on). */
  readonly tb: Testbed;
  /** The in-process controller started last. */
  readonly ctl: Controller;
  /** Every entry the in-process controllers logged, oldest first, each with `at` (ISO time). */
  readonly logs: Array<Record<string, unknown>>;
  /** Starts a new in-process controller with the fixture's options (after stopController: an operator restart). */
  startController(): Promise<Controller>;
  /** Stops the in-process controller (what an operator that dies leaves behind). */
  stopController(): Promise<void>;
}

/** Registers the suite's hooks (call it inside a describe) and returns the fixture they fill. */
export function useOperator(namespace: string, opts: UseOperatorOptions = {}): OperatorFixture {
  let tb: Testbed | undefined;
  let ctl: Controller | undefined;
  const logs: Array<Record<string, unknown>> = [];
  const namespaces = [namespace, ...(opts.namespaces ?? []), ...(opts.chartNamespace ? [opts.chartNamespace] : [])];
  const op: OperatorFixture = {
    get tb(): Testbed {
      if (!tb) throw new Error('useOperator: the testbed is there once the suite\'s before hook ran');
      return tb;
    },
    get ctl(): Controller {
      if (!ctl) throw new Error('useOperator: no in-process controller (controller: false, or the before hook has not run)');
      return ctl;
    },
    logs,
    async startController() {
      if (opts.controller === false) throw new Error('useOperator: this suite runs no in-process controller (controller: false)');
      const own = opts.controller?.log;
      ctl = testController(op.tb, {
        snapshotDir: join(op.tb.workDir, 'operator-snapshots', namespace), // each file its own
        ...opts.controller,
        log: (e) => {
          const entry = { ...e, at: new Date().toISOString() };
          logs.push(entry);
          own?.(entry);
        },
      });
      await ctl.start();
      return ctl;
    },
    async stopController() {
      await ctl?.stop();
    },
  };

  before(async function () {
    this.timeout(120_000);
    tb = await sharedTestbed();
    installClusterDns(tb.node.dnsIp);
    await installCrd(tb);
    for (const ns of namespaces) await createRestrictedNamespace(tb, ns);
    if (opts.controller !== false) await op.startController();
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (!tb || !test || test.state !== 'failed') return;
    this.timeout(60_000);
    const dir = join(tb.controlPlane.logDir, 'failed', test.fullTitle().replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120));
    await saveDiagnostics(tb, dir, namespaces, opts.chartNamespace, logs).catch((e: Error) => console.log(`could not save the diagnostics in ${dir}: ${e.message}`));
  });

  after(async function () {
    this.timeout(180_000);
    await ctl?.stop();
    if (!tb) return;
    if (opts.chartNamespace) {
      const releases = (await tb.helm(['list', '-n', opts.chartNamespace, '-q']).catch(() => '')).split('\n').filter(Boolean);
      for (const r of releases) await tb.helm(['uninstall', r, '-n', opts.chartNamespace, '--wait']).catch(() => undefined);
    }
    for (const ns of namespaces) await removeNamespace(tb, ns);
  });
  return op;
}

/**
 * Writes what explains a failed test into dir and prints where, with the tail of every previous container log of an
 * operator pod (the one a CI run would otherwise lose when a probe restarted the container).
 */
export async function saveDiagnostics(tb: Testbed, dir: string, namespaces: string[], chartNamespace: string | undefined,
  logs: Array<Record<string, unknown>>): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const kubectl = (args: string[]): Promise<string> => tb.kubectl(args).catch((e: Error) => `(kubectl ${args.join(' ')} failed: ${e.message})\n`);
  if (logs.length) writeFileSync(join(dir, 'controller.log'), logs.map((l) => JSON.stringify(l)).join('\n') + '\n');
  for (const ns of namespaces) {
    const objects = await kubectl(['-n', ns, 'get', 'svcclusters,statefulsets,pods,persistentvolumeclaims,jobs', '-o', 'wide']);
    const events = await kubectl(['-n', ns, 'get', 'events', '--sort-by=.lastTimestamp']);
    writeFileSync(join(dir, `${ns}.txt`), `${objects}\n--- events ---\n${events}`);
  }
  const shown: string[] = [];
  if (chartNamespace) {
    const list = JSON.parse(await tb.kubectl(['-n', chartNamespace, 'get', 'pods', '-l', 'app.kubernetes.io/name=svc-operator', '-o', 'json'])) as { items: k8s.V1Pod[] };
    for (const pod of list.items) {
      const name = pod.metadata!.name!;
      writeFileSync(join(dir, `${name}.describe.txt`), await kubectl(['-n', chartNamespace, 'describe', 'pod', name]));
      for (const c of pod.status?.containerStatuses ?? []) {
        writeFileSync(join(dir, `${name}.${c.name}.log`), await kubectl(['-n', chartNamespace, 'logs', name, '-c', c.name]));
        if (c.restartCount === 0) continue;
        const previous = await kubectl(['-n', chartNamespace, 'logs', name, '-c', c.name, '--previous']);
        writeFileSync(join(dir, `${name}.${c.name}.previous.log`), previous);
        shown.push(`--- ${chartNamespace}/${name} ${c.name}: restarted ${c.restartCount}x, the previous container's last lines ---\n${previous.split('\n').slice(-40).join('\n')}`);
      }
    }
  }
  console.log(`\n    diagnostics of the failed test: ${dir}${shown.length ? `\n${shown.join('\n')}` : ''}`);
}
