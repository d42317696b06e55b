// SVG charts of the results, drawn by Vega-Lite (compiled to Vega and rendered headless
// to SVG, which GitHub shows inline).
import * as vega from 'vega';
import { compile } from 'vega-lite';

async function toSvg(spec) {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

const base = {
  $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
  width: 520,
  height: 300,
  background: 'white',
  config: { font: 'sans-serif' },
};

/** Turn ops/s against history size (log scale), a line per backend. */
export function turnsChart(results) {
  const values = results.flatMap((r) =>
    r.turns.map((t) => ({ backend: r.name, history: t.history, ops: Math.round(t.ops) })),
  );
  return toSvg({
    ...base,
    title: 'Turns per second by history size (2 messages of ~1 KB per turn)',
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: {
        field: 'history',
        type: 'quantitative',
        scale: { type: 'log' },
        title: 'messages already in the session',
      },
      y: { field: 'ops', type: 'quantitative', scale: { type: 'log' }, title: 'turns/s (log)' },
      color: { field: 'backend', type: 'nominal' },
    },
  });
}

/** The adapter's turn as % of its raw ceiling, grouped by backend and history size. */
export function rawRatioChart(results) {
  const values = results.flatMap((r) =>
    r.turns
      .filter((t) => t.rawOps)
      .map((t) => ({
        backend: r.name,
        history: String(t.history),
        percent: Math.round((100 * t.ops) / t.rawOps),
      })),
  );
  return toSvg({
    ...base,
    title: 'Adapter turn as % of the raw ceiling on the same backend',
    data: { values },
    mark: 'bar',
    encoding: {
      x: { field: 'backend', type: 'nominal', title: null },
      xOffset: { field: 'history', type: 'nominal', sort: ['10', '1000', '10000'] },
      y: { field: 'percent', type: 'quantitative', title: '% of raw' },
      color: { field: 'history', type: 'nominal', title: 'history', sort: ['10', '1000', '10000'] },
    },
  });
}
