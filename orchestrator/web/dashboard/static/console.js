// Ballast console, shared parts: building elements as text (names,
// parameters and output come from users' jobs and are never parsed as
// HTML), reading the API, the console's writes with their session write
// token, and the address, which names the view and the object shown
// (#view=jobs, #job=ID, #run=ID, #sweep=ID beside the charts' #span=) so a
// link to any page can be shared and `ballast screenshot --page` can open it.
'use strict';

window.BallastConsole = (function () {
  const dash = '–';
  const SVG = 'http://www.w3.org/2000/svg';
  // The parameters that name what is shown; the others (span, filters)
  // stay when the page changes.
  const PAGE_KEYS = ['view', 'job', 'run', 'sweep'];

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return e;
  }

  function svgEl(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
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

  function dur(s) {
    if (typeof s !== 'number' || !isFinite(s)) return dash;
    if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
    return Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  }

  // money shows small costs with enough digits to be told from zero: a
  // one-minute job costs fractions of a cent.
  function money(v) {
    if (typeof v !== 'number' || !isFinite(v)) return dash;
    if (v === 0) return '0.00';
    if (Math.abs(v) < 0.01) return v.toPrecision(2);
    return v.toFixed(2);
  }

  // bytes shows a size in binary units, as `ballast jobs show` does.
  function bytes(v) {
    if (typeof v !== 'number' || !isFinite(v)) return dash;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0)) + ' ' + units[i];
  }

  // num is a value with its data-k name and, for a rounded text, the raw
  // value in data-v, as the overview draws its numbers.
  function num(key, v, fmt) {
    return el('span', { 'data-k': key, 'data-v': typeof v === 'number' ? String(v) : undefined }, fmt ? fmt(v) : text(v));
  }

  function badge(state, key) {
    return el('span', { class: 'badge ' + String(state || '').replace(/[^a-z]/g, ''), 'data-k': key }, text(state));
  }

  function hashParams() {
    return new URLSearchParams(location.hash.replace(/^#/, ''));
  }

  // hashWith is the address with the given parameters set (a falsy value
  // removes one); page parameters not given are dropped when any is given,
  // so opening a job leaves no sweep open behind it.
  function hashWith(set) {
    const p = hashParams();
    if (Object.keys(set).some((k) => PAGE_KEYS.includes(k))) {
      for (const k of PAGE_KEYS) if (!(k in set)) p.delete(k);
    }
    for (const [k, v] of Object.entries(set)) {
      if (v) p.set(k, v);
      else p.delete(k);
    }
    const s = p.toString();
    return s ? '#' + s : '#';
  }

  // view is the page the address names: a job, run or sweep opens its
  // page; else #view=, else the overview.
  function view() {
    const p = hashParams();
    if (p.get('job')) return 'job';
    if (p.get('run')) return 'run';
    if (p.get('sweep')) return 'sweep';
    const v = p.get('view');
    return ['overview', 'jobs', 'pipelines', 'sweeps'].includes(v) ? v : 'overview';
  }

  async function getJSON(url) {
    const res = await fetch(url, { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error('GET ' + url + ' answered ' + res.status + (await errorText(res)));
    return res.json();
  }

  async function errorText(res) {
    try {
      const b = await res.json();
      return b && b.error && b.error.message ? ': ' + b.error.message : '';
    } catch (e) {
      return '';
    }
  }

  // The session's write token, read once and again after a refusal (a
  // controller restarted without a token makes new ones).
  let session = null;

  async function writeToken(fresh) {
    if (!session || fresh) {
      const s = await getJSON('/api/v1/session');
      session = { token: s.csrf_token || '', header: s.header || 'X-Ballast-CSRF' };
    }
    return session;
  }

  // post sends a console write with the session's write token and returns
  // the decoded answer; a refusal is thrown with the API's message.
  async function post(url) {
    for (let i = 0; i < 2; i++) {
      const s = await writeToken(i > 0);
      const res = await fetch(url, { method: 'POST', cache: 'no-store', credentials: 'same-origin',
        headers: { Accept: 'application/json', [s.header]: s.token } });
      if (res.status === 403 && i === 0) continue;
      if (!res.ok) throw new Error('POST ' + url + ' answered ' + res.status + (await errorText(res)));
      return res.json();
    }
    throw new Error('POST ' + url + ' refused');
  }

  function setStatus(id, msg, kind) {
    const s = byId(id);
    if (!s) return;
    s.textContent = msg;
    s.hidden = msg === '';
    s.dataset.kind = kind || '';
  }

  // showView shows the sections of the current page and marks its tab.
  function showView() {
    const v = view();
    const tab = { job: 'jobs', run: 'pipelines', sweep: 'sweeps' }[v] || v;
    for (const s of document.querySelectorAll('main [data-view]')) s.hidden = !s.dataset.view.split(' ').includes(v);
    for (const a of document.querySelectorAll('#nav a[data-tab]')) {
      a.classList.toggle('on', a.dataset.tab === tab);
      a.href = hashWith({ view: a.dataset.tab });
    }
    document.body.dataset.view = v;
  }

  // ready marks a page as drawn once, so a screenshot or a test can wait
  // for the page it opened rather than for a fixed time.
  function ready(v) {
    const have = (document.body.dataset.ready || '').split(' ').filter(Boolean);
    if (!have.includes(v)) document.body.dataset.ready = have.concat(v).join(' ');
  }

  function start() {
    showView();
    window.addEventListener('hashchange', showView);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();

  return { ready, dash, el, svgEl, byId, text, when, dur, money, bytes, num, badge, hashParams, hashWith, view, getJSON, post, setStatus };
})();
