'use strict';
/* exported chart */
/* global WINDOW_MS, num */ // web/dashboard/dashboard.js's
// The dashboard's one drawing: served after web/dashboard/dashboard.js in the same script.
// A line chart of the last 15 minutes: x is time (the right edge is now), y from 0 to the
// largest value shown.
function chart(svg, times, series) {
  const NS = 'http://www.w3.org/2000/svg';
  svg.replaceChildren();
  if (!times.length) return;
  // The window is the last 15 minutes, or since the first sample (at least a minute) while
  // the server has held the room for less.
  const end = times[times.length - 1];
  const span = Math.min(WINDOW_MS, Math.max(60000, end - times[0]));
  const start = end - span;
  let max = 1;
  for (const s of series) for (const v of s.values) if (v > max) max = v;
  for (const frac of [0.25, 0.5, 0.75]) {
    const g = document.createElementNS(NS, 'line');
    g.setAttribute('x1', 0); g.setAttribute('x2', 300);
    g.setAttribute('y1', 100 - frac * 95); g.setAttribute('y2', 100 - frac * 95);
    g.setAttribute('stroke', '#e3e7ee'); g.setAttribute('stroke-width', 0.5);
    svg.appendChild(g);
  }
  for (const s of series) {
    const pts = [];
    for (let i = 0; i < times.length; ++i) {
      const x = (times[i] - start) / span * 300;
      const y = 100 - s.values[i] / max * 95;
      pts.push(x.toFixed(1) + ',' + y.toFixed(1));
    }
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', pts.join(' '));
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', s.color);
    line.setAttribute('stroke-width', 1.5);
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.appendChild(line);
  }
  const label = document.createElementNS(NS, 'text');
  label.setAttribute('x', 3); label.setAttribute('y', 10);
  label.setAttribute('font-size', 8); label.setAttribute('fill', '#5b6676');
  label.textContent = num(max);
  svg.appendChild(label);
  svg.setAttribute('aria-label', series.map((s) => s.name + ' ' + num(s.values[s.values.length - 1])).join(', '));
}
