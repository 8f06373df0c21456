// Ballast dashboard, the jobs console: the recent jobs (GET /api/v1/jobs,
// filtered by state) and one job's page (its record and the first
// LOG_LINES output lines kept for it), opened from the list and kept in the address as
// #job=ID beside the charts' #span=, so a link to a job can be shared.
// Everything is drawn as text: names and output come from users' jobs.
'use strict';

(function () {
  const LIST = '/api/v1/jobs';
  const REFRESH_MS = 3000; // the list and an open job's page are read again this often
  const LIMIT = 50;
  const LOG_LINES = 200;
  const dash = '–';

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids) {
      if (kid === undefined || kid === null) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return e;
  }

  const byId = (id) => document.getElementById(id);
  const text = (v) => (v === undefined || v === null || v === '' ? dash : String(v));

  function when(iso) {
    const t = Date.parse(iso || '');
    if (!t || t < 0) return dash;
    return new Date(t).toLocaleString();
  }

  // hashParams and hashWith read and change the address's #a=b&c=d, so
  // the job and the charts' span live side by side.
  function hashParams() {
    return new URLSearchParams(location.hash.replace(/^#/, ''));
  }

  function hashWith(key, value) {
    const p = hashParams();
    if (value) p.set(key, value);
    else p.delete(key);
    const s = p.toString();
    return s ? '#' + s : '#';
  }

  async function getJSON(url) {
    const res = await fetch(url, { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error('GET ' + url + ' answered ' + res.status);
    return res.json();
  }

  function setStatus(id, msg) {
    const s = byId(id);
    s.textContent = msg;
    s.hidden = msg === '';
  }

  async function loadList() {
    const st = byId('jobs-state').value;
    const url = LIST + '?limit=' + LIMIT + (st ? '&state=' + encodeURIComponent(st) : '');
    let list;
    try {
      list = (await getJSON(url)).jobs || [];
    } catch (e) {
      setStatus('jobs-status', 'jobs unavailable: ' + e.message);
      return;
    }
    if (st !== byId('jobs-state').value) return; // the filter changed meanwhile
    setStatus('jobs-status', '');
    const rows = list.map((j) => {
      const k = 'jobs.' + j.id + '.';
      const spec = j.spec || {};
      return el('tr', { 'data-job': j.id },
        el('td', {}, el('a', { class: 'mono', href: hashWith('job', j.id), 'data-k': k + 'id' }, j.id)),
        el('td', {}, el('span', { 'data-k': k + 'template' }, text(spec.template))),
        el('td', {}, el('span', { 'data-k': k + 'team' }, text(spec.team))),
        el('td', {}, el('span', { class: 'badge ' + String(j.state || '').replace(/[^a-z]/g, ''), 'data-k': k + 'state' }, text(j.state))),
        el('td', { class: 'n' }, el('span', { 'data-k': k + 'attempt' }, text(j.attempt))),
        el('td', {}, text(j.queue)),
        el('td', { class: 'mono' }, text(j.worker)),
        el('td', {}, when(j.created_at)),
        el('td', { class: 'err' }, text(j.last_error)));
    });
    if (rows.length === 0) rows.push(el('tr', { class: 'empty' }, el('td', { colspan: '9' }, st ? 'no ' + st + ' jobs' : 'no jobs yet')));
    const body = byId('jobs');
    body.replaceChildren(...rows);
    body.dataset.count = String(list.length);
  }

  async function loadJob(id) {
    const panel = byId('job');
    if (!id) {
      panel.hidden = true;
      panel.dataset.job = '';
      return;
    }
    panel.hidden = false;
    panel.dataset.job = id;
    byId('job-id').textContent = id;
    const base = LIST + '/' + encodeURIComponent(id);
    let j;
    let lines;
    try {
      let logs;
      [j, logs] = await Promise.all([getJSON(base), getJSON(base + '/logs?limit=' + LOG_LINES)]);
      lines = logs.lines || [];
    } catch (e) {
      setStatus('job-status', 'job unavailable: ' + e.message);
      return;
    }
    if (panel.dataset.job !== id) return; // another job was opened meanwhile
    setStatus('job-status', '');
    const spec = j.spec || {};
    const params = Object.entries(spec.params || {}).map(([k, v]) => k + '=' + JSON.stringify(v)).join(' ');
    const fields = [
      ['template', spec.template], ['state', j.state], ['team', spec.team], ['class', spec.class],
      ['attempt', j.attempt], ['queue', j.queue], ['worker', j.worker], ['exit code', j.exit_code],
      ['last error', j.last_error], ['params', params], ['command', (spec.command || []).join(' ')],
      ['checkpoint', j.checkpoint], ['created', when(j.created_at)], ['started', when(j.started_at)],
      ['finished', when(j.finished_at)],
    ];
    byId('job-fields').replaceChildren(...fields.map(([k, v]) =>
      el('tr', {}, el('th', {}, k), el('td', { 'data-k': 'job.' + k.replace(' ', '_') }, text(v)))));
    const out = byId('job-logs');
    out.replaceChildren(...lines.map((l) =>
      el('span', { class: l.stream === 'stderr' ? 'stderr' : 'stdout' }, '[' + l.attempt + ' ' + l.stream + '] ' + l.text + '\n')));
    if (lines.length === 0) out.textContent = 'no output kept';
    out.dataset.lines = String(lines.length);
  }

  function refresh() {
    loadList();
    const id = hashParams().get('job') || '';
    if (id) loadJob(id);
  }

  function start() {
    byId('jobs-state').addEventListener('change', loadList);
    byId('job-close').addEventListener('click', (ev) => {
      ev.preventDefault();
      history.replaceState(null, '', hashWith('job', ''));
      loadJob('');
    });
    window.addEventListener('hashchange', () => loadJob(hashParams().get('job') || ''));
    loadList();
    loadJob(hashParams().get('job') || '');
    setInterval(refresh, REFRESH_MS);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
