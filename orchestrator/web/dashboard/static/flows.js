// Ballast console, pipelines and sweeps: the pipelines with their latest
// runs and a trigger button (GET /api/v1/pipelines); a run's page with its
// DAG drawn in SVG, each step coloured by its state; the sweeps
// (GET /api/v1/sweeps); and a sweep's page with every trial's parameters
// and metric, the metric drawn against a parameter, and the best trial.
'use strict';

(function () {
  const C = window.BallastConsole;
  const { el, svgEl, byId, text, when, num, badge } = C;
  const REFRESH_MS = 3000;

  // ---- pipelines --------------------------------------------------------

  async function loadPipelines() {
    let list;
    try {
      list = (await C.getJSON('/api/v1/pipelines?runs=5')).pipelines || [];
    } catch (e) {
      C.setStatus('pipelines-status', 'pipelines unavailable: ' + e.message, 'error');
      return;
    }
    C.setStatus('pipelines-status', '');
    const rows = [];
    for (const p of list) {
      const k = 'pipeline.' + p.name + '.';
      const runs = p.runs || [];
      const last = runs[0];
      rows.push(el('tr', { 'data-pipeline': p.name },
        el('td', {}, el('b', { 'data-k': k + 'name' }, p.name)),
        el('td', { class: 'mono' }, text((p.definition || {}).schedule)),
        el('td', {}, String(Object.keys((p.definition || {}).steps || {}).length)),
        el('td', {}, last ? badge(last.state, k + 'last_state') : C.dash),
        el('td', {}, runs.map((r, i) => [i ? ' ' : '', el('a', { class: 'mono', href: C.hashWith({ run: r.id }), 'data-k': k + 'run.' + i, title: r.state }, r.id.slice(-8))])),
        el('td', {}, el('button', { type: 'button', class: 'act', 'data-trigger': p.name }, 'Trigger now'))));
    }
    if (rows.length === 0) rows.push(el('tr', { class: 'empty' }, el('td', { colspan: '6' }, 'no pipelines configured')));
    const body = byId('pipelines');
    body.replaceChildren(...rows);
    body.dataset.count = String(list.length);
    C.ready('pipelines');
  }

  async function trigger(name) {
    C.setStatus('pipelines-action', 'triggering ' + name + '…');
    try {
      const run = await C.post('/api/v1/pipelines/' + encodeURIComponent(name) + '/trigger');
      C.setStatus('pipelines-action', 'triggered ' + name + ': run ' + run.id, 'ok');
      byId('pipelines-action').dataset.run = run.id;
      byId('pipelines-action').append(' · ', el('a', { href: C.hashWith({ run: run.id }) }, 'open it'));
      loadPipelines();
    } catch (e) {
      C.setStatus('pipelines-action', e.message, 'error');
    }
  }

  // layers orders a DAG's steps into columns: a step sits one column right
  // of its deepest dependency, so every edge points right.
  function layers(steps) {
    const depth = {};
    const visit = (n, seen) => {
      if (depth[n] !== undefined) return depth[n];
      if (seen.has(n)) return 0; // a cycle the config would refuse; do not loop
      seen.add(n);
      const deps = (steps[n] || {}).depends_on || [];
      depth[n] = deps.length ? 1 + Math.max(...deps.map((d) => visit(d, seen))) : 0;
      return depth[n];
    };
    const names = Object.keys(steps).sort();
    for (const n of names) visit(n, new Set());
    const cols = [];
    for (const n of names) (cols[depth[n]] = cols[depth[n]] || []).push(n);
    return cols;
  }

  function drawDAG(svg, run) {
    const steps = (run.definition || {}).steps || {};
    const cols = layers(steps);
    const NW = 150;
    const NH = 40;
    const GX = 60;
    const GY = 18;
    const rows = Math.max(1, ...cols.map((c) => c.length));
    const W = Math.max(1, cols.length) * (NW + GX) - GX + 20;
    const H = rows * (NH + GY) - GY + 20;
    const pos = {};
    cols.forEach((col, x) => col.forEach((n, y) => {
      const off = ((rows - col.length) * (NH + GY)) / 2;
      pos[n] = { x: 10 + x * (NW + GX), y: 10 + off + y * (NH + GY) };
    }));
    const kids = [svgEl('defs', {}, svgEl('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svgEl('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' })))];
    for (const [n, s] of Object.entries(steps)) {
      for (const d of s.depends_on || []) {
        if (!pos[d] || !pos[n]) continue;
        const a = pos[d];
        const b = pos[n];
        kids.push(svgEl('path', { class: 'edge', 'marker-end': 'url(#arrow)',
          d: 'M' + (a.x + NW) + ',' + (a.y + NH / 2) + ' C' + (a.x + NW + GX / 2) + ',' + (a.y + NH / 2) + ' ' + (b.x - GX / 2) + ',' + (b.y + NH / 2) + ' ' + (b.x - 2) + ',' + (b.y + NH / 2) }));
      }
    }
    for (const n of Object.keys(steps)) {
      const st = ((run.steps || {})[n] || {}).state || 'pending';
      const p = pos[n];
      kids.push(svgEl('g', { class: 'node ' + st.replace(/[^a-z]/g, ''), 'data-step': n, 'data-state': st },
        svgEl('rect', { x: p.x, y: p.y, width: NW, height: NH, rx: 6 }),
        svgEl('text', { x: p.x + 8, y: p.y + 16, class: 'name' }, n.length > 20 ? n.slice(0, 19) + '…' : n),
        svgEl('text', { x: p.x + 8, y: p.y + 32, class: 'state' }, st)));
    }
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('width', String(W));
    svg.setAttribute('height', String(H));
    svg.replaceChildren(...kids);
  }

  async function loadRun() {
    const id = C.hashParams().get('run');
    if (!id) return;
    let run;
    try {
      run = await C.getJSON('/api/v1/runs/' + encodeURIComponent(id));
    } catch (e) {
      C.setStatus('run-status', 'run unavailable: ' + e.message, 'error');
      return;
    }
    if (C.hashParams().get('run') !== id) return;
    C.setStatus('run-status', '');
    byId('run-id').textContent = run.id;
    byId('run-fields').replaceChildren(
      ...[['pipeline', run.pipeline], ['state', badge(run.state, 'run.state')], ['trigger', run.trigger], ['scheduled', when(run.scheduled)],
        ['created', when(run.created_at)], ['finished', when(run.finished_at)], ['deadline', when(run.deadline)], ['reason', run.reason]]
        .map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', { 'data-k': k === 'state' ? undefined : 'run.' + k }, v instanceof Node ? v : text(v)))));
    drawDAG(byId('run-dag'), run);
    const steps = (run.definition || {}).steps || {};
    const rows = Object.keys(steps).sort().map((n) => {
      const rec = (run.steps || {})[n] || {};
      return el('tr', { 'data-step': n },
        el('td', {}, el('b', {}, n)),
        el('td', {}, text(steps[n].template)),
        el('td', {}, badge(rec.state || 'pending', 'run.step.' + n + '.state')),
        el('td', {}, rec.job_id ? el('a', { class: 'mono', href: C.hashWith({ job: rec.job_id }), 'data-k': 'run.step.' + n + '.job' }, rec.job_id) : C.dash),
        el('td', {}, text((steps[n].depends_on || []).join(', '))));
    });
    const body = byId('run-steps');
    body.replaceChildren(...rows);
    body.dataset.count = String(rows.length);
    byId('run-cancel').disabled = run.state !== 'running';
    C.ready('run');
  }

  async function cancelRun() {
    const id = C.hashParams().get('run');
    if (!id || !window.confirm('Cancel run ' + id + '?')) return;
    try {
      await C.post('/api/v1/runs/' + encodeURIComponent(id) + '/cancel');
      C.setStatus('run-action', 'cancelled', 'ok');
      loadRun();
    } catch (e) {
      C.setStatus('run-action', e.message, 'error');
    }
  }

  // ---- sweeps -----------------------------------------------------------

  async function loadSweeps() {
    let list;
    try {
      list = (await C.getJSON('/api/v1/sweeps?limit=50')).sweeps || [];
    } catch (e) {
      C.setStatus('sweeps-status', 'sweeps unavailable: ' + e.message, 'error');
      return;
    }
    C.setStatus('sweeps-status', '');
    const rows = list.map((s) => {
      const k = 'sweeps.' + s.id + '.';
      const sum = s.summary || {};
      const counts = Object.entries(sum.counts || {}).sort().map(([st, n]) => n + ' ' + st).join(', ');
      return el('tr', { 'data-sweep': s.id },
        el('td', {}, el('a', { class: 'mono', href: C.hashWith({ sweep: s.id }), 'data-k': k + 'id' }, s.id)),
        el('td', {}, badge(s.state, k + 'state')),
        el('td', { class: 'n' }, num(k + 'total', sum.total)),
        el('td', {}, counts || C.dash),
        el('td', { class: 'n' }, sum.best ? num(k + 'best', sum.best.metric, (v) => v.toPrecision(4)) : C.dash),
        el('td', {}, when(s.created_at)));
    });
    if (rows.length === 0) rows.push(el('tr', { class: 'empty' }, el('td', { colspan: '6' }, 'no sweeps yet')));
    const body = byId('sweeps');
    body.replaceChildren(...rows);
    body.dataset.count = String(list.length);
    C.ready('sweeps');
  }

  // numericParams are the parameters that are numbers in every trial and
  // take more than one value: those a metric can be drawn against.
  function numericParams(params) {
    const names = new Set();
    for (const p of params) for (const k of Object.keys(p || {})) names.add(k);
    return [...names].sort().filter((k) => {
      const vs = params.map((p) => (p || {})[k]);
      return vs.every((v) => typeof v === 'number') && new Set(vs).size > 1;
    });
  }

  const sweepPage = { id: '', param: '' };

  // drawScatter plots each trial with a metric at (its value of param, its
  // metric), the best one marked, with the axes' ranges written out.
  function drawScatter(svg, v, param) {
    const W = 480;
    const H = 240;
    const L = 56;
    const B = 30;
    const T = 10;
    const R = 14;
    const pts = [];
    (v.trials || []).forEach((t) => {
      const p = (v.trial_params || [])[t.index] || {};
      if (typeof t.metric === 'number' && typeof p[param] === 'number') pts.push({ x: p[param], y: t.metric, i: t.index, st: t.state });
    });
    const kids = [];
    const best = v.summary && v.summary.best ? v.summary.best.index : -1;
    if (pts.length === 0) {
      kids.push(svgEl('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no trial has reported a metric yet'));
    } else {
      const xs = pts.map((p) => p.x);
      const ys = pts.map((p) => p.y);
      let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
      if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
      if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
      const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
      const sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - B - T);
      kids.push(svgEl('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' }));
      kids.push(svgEl('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }));
      const fmt = (n) => (Math.abs(n) >= 1000 || (Math.abs(n) < 0.01 && n !== 0) ? n.toExponential(2) : String(Number(n.toPrecision(4))));
      kids.push(svgEl('text', { x: L, y: H - 10, class: 'tick' }, fmt(x0)));
      kids.push(svgEl('text', { x: W - R, y: H - 10, 'text-anchor': 'end', class: 'tick' }, fmt(x1)));
      kids.push(svgEl('text', { x: (L + W - R) / 2, y: H - 10, 'text-anchor': 'middle', class: 'label' }, param));
      kids.push(svgEl('text', { x: L - 6, y: H - B, 'text-anchor': 'end', class: 'tick' }, fmt(y0)));
      kids.push(svgEl('text', { x: L - 6, y: T + 10, 'text-anchor': 'end', class: 'tick' }, fmt(y1)));
      for (const p of pts) {
        kids.push(svgEl('circle', { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: p.i === best ? 7 : 4,
          class: 'pt' + (p.i === best ? ' best' : '') + (p.st === 'succeeded' ? '' : ' unfinished'), 'data-trial': p.i },
        svgEl('title', {}, 'trial ' + p.i + ': ' + param + '=' + p.x + ', metric ' + p.y)));
      }
    }
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.replaceChildren(...kids);
    svg.dataset.points = String(pts.length);
  }

  async function loadSweep() {
    const id = C.hashParams().get('sweep');
    if (!id) return;
    let v;
    try {
      v = await C.getJSON('/api/v1/sweeps/' + encodeURIComponent(id));
    } catch (e) {
      C.setStatus('sweep-status', 'sweep unavailable: ' + e.message, 'error');
      return;
    }
    if (C.hashParams().get('sweep') !== id) return;
    C.setStatus('sweep-status', '');
    const rec = v.sweep || {};
    const spec = rec.spec || {};
    const sum = v.summary || {};
    byId('sweep-id').textContent = rec.id;
    const goal = spec.goal || 'minimize';
    byId('sweep-fields').replaceChildren(
      ...[['template', spec.template], ['state', badge(rec.state, 'sweep.state')], ['metric', (spec.metric || 'metric') + ' (' + goal + ')'],
        ['trials', sum.total], ['progress', Object.entries(sum.counts || {}).sort().map(([s, n]) => n + ' ' + s).join(', ')],
        ['created', when(rec.created_at)], ['finished', when(rec.finished_at)]]
        .map(([k, val]) => el('tr', {}, el('th', {}, k), el('td', { 'data-k': k === 'state' ? undefined : 'sweep.' + k }, val instanceof Node ? val : text(val)))));
    const best = sum.best;
    const bp = best ? ((v.trial_params || [])[best.index] || v.best_params || {}) : {};
    byId('sweep-best').replaceChildren(...(best
      ? ['trial ', num('sweep.best.index', best.index), ' · ', spec.metric || 'metric', ' ', num('sweep.best.metric', best.metric, (x) => String(Number(x.toPrecision(6)))),
        ' · ', el('span', { class: 'mono', 'data-k': 'sweep.best.params' }, Object.entries(bp).map(([k, x]) => k + '=' + JSON.stringify(x)).join(' ')),
        v.best_job ? [' · job ', el('a', { class: 'mono', href: C.hashWith({ job: v.best_job }), 'data-k': 'sweep.best.job' }, v.best_job)] : null]
      : ['no trial has succeeded with a metric yet']).flat());
    const params = v.trial_params || [];
    const names = [...new Set(params.flatMap((p) => Object.keys(p || {})))].sort();
    byId('sweep-head').replaceChildren(el('tr', {}, el('th', { class: 'n' }, 'trial'), el('th', {}, 'state'),
      ...names.map((n) => el('th', { class: 'n' }, n)), el('th', { class: 'n' }, spec.metric || 'metric'), el('th', {}, 'job')));
    const rows = (v.trials || []).map((t) => {
      const p = params[t.index] || {};
      const job = (rec.trials || {})[t.index];
      const k = 'trial.' + t.index + '.';
      return el('tr', { 'data-trial': String(t.index), class: best && best.index === t.index ? 'best' : '' },
        el('td', { class: 'n' }, String(t.index)),
        el('td', {}, badge(t.state, k + 'state')),
        ...names.map((n) => el('td', { class: 'n mono', 'data-k': k + 'param.' + n }, p[n] === undefined ? C.dash : JSON.stringify(p[n]))),
        el('td', { class: 'n' }, num(k + 'metric', t.metric, (x) => (typeof x === 'number' ? String(Number(x.toPrecision(6))) : C.dash))),
        el('td', {}, job ? el('a', { class: 'mono', href: C.hashWith({ job }) }, job.slice(-10)) : C.dash));
    });
    const body = byId('sweep-trials');
    body.replaceChildren(...rows);
    body.dataset.count = String(rows.length);
    const choices = numericParams(params);
    if (id !== sweepPage.id || !choices.includes(sweepPage.param)) {
      sweepPage.id = id;
      sweepPage.param = choices[0] || '';
    }
    const sel = byId('sweep-param');
    sel.replaceChildren(...choices.map((c) => el('option', { value: c, selected: c === sweepPage.param }, c)));
    sel.hidden = choices.length === 0;
    byId('sweep-chart-note').textContent = choices.length ? (spec.metric || 'metric') + ' against' : 'no numeric parameter varies: nothing to chart';
    drawScatter(byId('sweep-chart'), v, sweepPage.param);
    byId('sweep-cancel').disabled = rec.state !== 'running';
    C.ready('sweep');
  }

  async function cancelSweep() {
    const id = C.hashParams().get('sweep');
    if (!id || !window.confirm('Cancel sweep ' + id + '?')) return;
    try {
      const res = await C.post('/api/v1/sweeps/' + encodeURIComponent(id) + '/cancel');
      C.setStatus('sweep-action', res.cancelled ? 'cancelled' : 'it had ended already', 'ok');
      loadSweep();
    } catch (e) {
      C.setStatus('sweep-action', e.message, 'error');
    }
  }

  function refresh() {
    const v = C.view();
    if (v === 'pipelines') loadPipelines();
    if (v === 'run') loadRun();
    if (v === 'sweeps') loadSweeps();
    if (v === 'sweep') loadSweep();
  }

  function start() {
    byId('pipelines').addEventListener('click', (ev) => {
      const b = ev.target instanceof Element ? ev.target.closest('button[data-trigger]') : null;
      if (b) trigger(b.dataset.trigger);
    });
    byId('run-cancel').addEventListener('click', cancelRun);
    byId('sweep-cancel').addEventListener('click', cancelSweep);
    byId('sweep-param').addEventListener('change', (ev) => {
      sweepPage.param = ev.target.value;
      loadSweep();
    });
    window.addEventListener('hashchange', refresh);
    refresh();
    setInterval(refresh, REFRESH_MS);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
