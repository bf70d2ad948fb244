// Lints the chart's monitoring: the Prometheus alert rules and the Grafana dashboard. Every PromQL expression is
// parsed (promql.ts) and every metric name it reads must be one the members (server/api/metrics.ts, any supported
// release) or the operator (its Controller's registry) export, every label it groups or matches on one they or the
// scrape carry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { load } from 'js-yaml';
import type { Registry } from 'prom-client';
import { createMetrics } from '../../../server/api/metrics.js';
import type { SvcServer } from '../../../server/core/server.js';
import { releaseFor, SUPPORTED_RELEASES } from '../../../server/releases.js';
import { Controller } from '../../../operator/controller/controller.js';
import { repoRoot } from '../../k8s/binaries.js';
import { parsePromql } from './promql.js';

const DIR = join(repoRoot(), 'charts', 'svc-operator', 'files', 'monitoring');
/** Series Prometheus makes itself, and labels the scrape adds (the PodMonitor/ServiceMonitor relabelling). */
const SYNTHETIC = ['up'];
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'cluster', 'le'];

interface Exported { metrics: Set<string>; labels: Set<string> }

function names(registry: Registry, into: Exported): void {
  for (const m of registry.getMetricsAsArray()) {
    const { name, labelNames = [], type } = m as unknown as { name: string; labelNames?: string[]; type: string };
    into.metrics.add(name);
    if (type === 'histogram' || type === 'summary') for (const s of ['_bucket', '_sum', '_count']) into.metrics.add(name + s);
    for (const l of labelNames) into.labels.add(l);
  }
}

/** What the members of every release and the operator export. */
function exported(): Exported {
  const out: Exported = { metrics: new Set(SYNTHETIC), labels: new Set(TARGET_LABELS) };
  for (const v of SUPPORTED_RELEASES) {
    // metric objects only: their values are collected at scrape time, which this never does
    const server = { opts: { release: releaseFor(v) }, observers: {}, backend: {} } as unknown as SvcServer;
    names(createMetrics(server).registry, out);
  }
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  names(new Controller(kc, { snapshotDir: '/nonexistent', log: () => undefined }).registry, out); // never started: no connection
  return out;
}

function check(expr: string, known: Exported, where: string): string[] {
  let refs;
  try {
    refs = parsePromql(expr);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`, { cause: e });
  }
  for (const m of refs.metrics) expect(known.metrics.has(m), `${where}: metric ${m} is not exported by the members or the operator`).to.equal(true);
  for (const l of refs.labels) expect(known.labels.has(l), `${where}: label ${l} is on no exported series`).to.equal(true);
  return refs.metrics;
}

describe('unit: the chart\'s alerts and dashboard', () => {
  const known = exported();

  it('the parser refuses malformed PromQL (so the lint can fail)', () => {
    for (const bad of ['rate(x)', 'sum by (a) x', 'x{a="b"', 'max(x) by', 'nope(x)', 'x[5m]', 'x and 1', 'x{a=~"("}', 'histogram_quantile(x, 0.9)', 'x +', 'sum(rate(x[5m]) by (a)']) {
      expect(() => parsePromql(bad), bad).to.throw();
    }
    expect(parsePromql('sum by (le) (rate(a_bucket{job="j"}[5m])) / on (x) group_left b offset 1h > bool 2').metrics).to.deep.equal(['a_bucket', 'b']);
    expect(parsePromql('max(x{__name__="y"}) without (pod) - -1').labels).to.deep.equal(['pod']);
  });

  it('the exported set is real: member, 3.3-only and operator names are in it', () => {
    for (const m of ['svc_server_has_leader', 'svc_debugging_mvcc_db_total_size_in_bytes', 'svc_mvcc_db_total_size_in_bytes', 'svc_disk_wal_fsync_duration_seconds_bucket',
      'svc_operator_upgrade_step', 'svc_operator_reconcile_total']) {
      expect(known.metrics.has(m), m).to.equal(true);
    }
    expect(known.metrics.has('etcd_server_has_leader')).to.equal(false);
  });

  it('the alert rules: well-formed, the five alerts the issue names, every expression valid against the exported metrics', () => {
    const rules = load(readFileSync(join(DIR, 'prometheus-rules.yaml'), 'utf8')) as { groups: Array<{ name: string; rules: Array<Record<string, unknown>> }> };
    const alerts = new Map<string, Record<string, unknown>>();
    for (const g of rules.groups) {
      expect(g.name).to.be.a('string');
      for (const r of g.rules) {
        expect(Object.keys(r).every((k) => ['alert', 'expr', 'for', 'labels', 'annotations'].includes(k)), `keys of ${String(r.alert)}`).to.equal(true);
        expect(r.alert).to.match(/^[A-Z][A-Za-z]+$/);
        expect(r.for, `${String(r.alert)}: for`).to.match(/^\d+[smh]$/);
        expect((r.labels as Record<string, string>).severity).to.be.oneOf(['warning', 'critical']);
        expect((r.annotations as Record<string, string>).summary, `${String(r.alert)}: summary`).to.be.a('string');
        alerts.set(r.alert as string, { ...r, metrics: check(r.expr as string, known, `alert ${String(r.alert)}`) });
      }
    }
    const reads = (alert: string) => (alerts.get(alert)?.metrics ?? []) as string[];
    expect(reads('SvcClusterNoLeader')).to.include('svc_server_has_leader');
    expect(reads('SvcMemberDown')).to.include('up');
    expect(reads('SvcDatabaseNearQuota')).to.include.members(['svc_mvcc_db_total_size_in_bytes', 'svc_debugging_mvcc_db_total_size_in_bytes', 'svc_server_quota_backend_bytes']);
    expect(reads('SvcAlarmRaised')).to.include('svc_server_alarms');
    expect(reads('SvcUpgradeStuck')).to.include('svc_operator_upgrade_step');
    expect(reads('SvcBackupFailing')).to.include.members(['svc_operator_backup_failing', 'svc_operator_backup_verify_failing']);
  });

  it('the Grafana dashboard: every panel query and variable query parses and reads exported metrics', () => {
    const dash = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as {
      uid: string; panels: Array<{ title: string; targets: Array<{ expr: string }> }>; templating: { list: Array<{ name: string; query: unknown }> };
    };
    expect(dash.uid).to.equal('svc-clusters');
    // Grafana's interval variables stand where PromQL wants a duration; the others are inside strings
    const grafana = (e: string) => e.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m');
    const read = new Set<string>();
    expect(dash.panels.length).to.be.at.least(8);
    for (const p of dash.panels) {
      expect(p.targets.length, p.title).to.be.greaterThan(0);
      for (const t of p.targets) for (const m of check(grafana(t.expr), known, `panel "${p.title}"`)) read.add(m);
    }
    for (const v of dash.templating.list) {
      if (v.name === 'datasource') continue;
      const q = (v.query as { query: string }).query;
      const m = /^label_values\((.*),\s*([A-Za-z_]+)\)$/.exec(q);
      expect(m, `variable ${v.name}: ${q}`).to.not.equal(null);
      check(m![1], known, `variable ${v.name}`);
      expect(known.labels.has(m![2])).to.equal(true);
    }
    // both sides are on it
    expect([...read].some((m) => m.startsWith('svc_operator_'))).to.equal(true);
    expect([...read].some((m) => m.startsWith('svc_server_'))).to.equal(true);
  });
});
