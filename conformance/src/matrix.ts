import type { CapabilitySummary, ConformanceReport, ReportCapability } from './types.js';

const MARK: Record<CapabilitySummary['status'], string> = {
  passed: '✅',
  failed: '❌',
  'not implemented': '—',
  'not run': '·',
};

/** A report's column heading: adapter, label and Node version when the report has them. */
function columnName(report: ConformanceReport): string {
  const parts = [report.adapter];
  if (report.runtime?.label) parts.push(report.runtime.label);
  if (report.runtime?.node) parts.push(`node ${report.runtime.node}`);
  return parts.join(' · ');
}

function cell(summary: CapabilitySummary | undefined): string {
  if (!summary) return MARK['not run'];
  const mark = MARK[summary.status];
  if (summary.status === 'passed' || summary.status === 'failed') {
    const skipped = summary.skipped ? `, ${summary.skipped} skipped` : '';
    return `${mark} ${summary.passed}/${summary.passed + summary.failed}${skipped}`;
  }
  return mark;
}

/**
 * Puts several conformance reports side by side as one Markdown table: a row per
 * capability (the base `Store` contract first), a column per report (adapter · label ·
 * Node version), cells ✅ passed/total, ❌ when any test failed, — not implemented, · not
 * run. Ends with a legend and, per failed column, the failing test names. Reports are
 * columns in the order given; capabilities are the union of the reports' own, so a newer
 * suite with more capabilities renders beside an older one.
 */
export function formatMatrix(reports: readonly ConformanceReport[]): string {
  if (reports.length === 0) return 'No conformance reports.';
  const capabilities: ReportCapability[] = [];
  for (const report of reports) {
    for (const cap of Object.keys(report.capabilities) as ReportCapability[]) {
      if (!capabilities.includes(cap)) capabilities.push(cap);
    }
  }
  const header = ['capability', ...reports.map(columnName)];
  const rows = capabilities.map((cap) => [
    `\`${cap}\``,
    ...reports.map((r) => cell(r.capabilities[cap])),
  ]);
  const table = [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`);
  const lines = [
    ...table,
    '',
    '✅ passed/total · ❌ a test failed · — not implemented · · not run',
  ];
  for (const report of reports) {
    const failed = report.tests.filter((t) => t.status === 'failed');
    if (failed.length === 0) continue;
    lines.push('', `**${columnName(report)}**: ${failed.length} failed`);
    for (const t of failed.slice(0, 20)) lines.push(`- [${t.spec}] ${t.name}`);
    if (failed.length > 20) lines.push(`- … and ${failed.length - 20} more`);
  }
  return lines.join('\n');
}

/** True when every report ran every capability it has without a failure or a skip. */
export function matrixPassed(reports: readonly ConformanceReport[]): boolean {
  return reports.every((r) =>
    Object.values(r.capabilities).every((c) => c.failed === 0 && c.skipped === 0),
  );
}
