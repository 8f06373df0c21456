// Ballast dashboard: draws GET /api/v1/overview and keeps it current from
// the overview stream, falling back to polling when the stream fails.
// The charts' span (1h, 6h or 24h) is chosen with the buttons above them
// and kept in the address as #span=NAME; without one the API's default is
// asked for (no ?span=).
//
// Every number is drawn by num(), which gives it a data-k naming it and a
// data-v holding the raw JSON value, so a test can read the page and
// compare it with the API exactly however the text is rounded.
'use strict';

(function () {
  const OVERVIEW = '/api/v1/overview';
  const COSTS = '/api/v1/costs';
  const SETTLE_MS = 60000; // how often the settlement between teams is read again
  const STREAM = '/api/v1/overview/stream';
  const POLL_MS = 2000; // polling pace while the stream is down
  const STALE_MS = 5000; // no update for this long: the page says stale
  const RESTREAM_MS = 10000; // how soon to try a stream the browser gave up on
  const SVG = 'http://www.w3.org/2000/svg';
  const SPANS = ['1h', '6h', '24h']; // the series spans the API offers (insight.Spans)

  const state = {
    updates: 0, // renders so far; mirrored in body[data-updates] for tests
    lastRender: 0, // Date.now() of the last render
    lastAt: 0, // the "at" of the last overview drawn, to drop late poll answers
    streaming: false, // an event arrived since the stream last failed
    poll: 0,
    error: '',
    span: '', // the span asked for; '' asks for the API's default
    shownSpan: '', // the span of the series drawn, as the overview names it
    gen: 0, // bumped on each change of span: answers asked for before are dropped
    es: null, // the open EventSource
    restream: 0, // timer of the next try at a stream the browser gave up on
    settledAt: 0, // Date.now() of the last settlement read, 0 for never
    settling: false, // a settlement read is in flight
  };

  // ---- formatting -------------------------------------------------------

  const dash = '–';

  // money shows cents, and a small non-zero amount with two significant
  // digits: a minute of a job costs fractions of a cent, which is not 0.00.
  function money(v) {
    if (typeof v !== 'number') return dash;
    if (v !== 0 && Math.abs(v) < 0.005) return v.toPrecision(2);
    return v.toFixed(2);
  }

  function pct(v) {
    return typeof v === 'number' ? Math.round(v * 100) + '%' : dash;
  }

  function int(v) {
    return typeof v === 'number' ? String(v) : dash;
  }

  function pad(n) {
    return String(n).padStart(2, '0');
  }

  // dur renders seconds as people read ages and waits: 4.2s, 3m 05s, 2h 10m, 3d 4h.
  function dur(s) {
    if (typeof s !== 'number' || !isFinite(s)) return dash;
    if (s < 0) s = 0;
    if (s < 10) return s.toFixed(1) + 's';
    if (s < 60) return Math.floor(s) + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + pad(Math.floor(s % 60)) + 's';
    const h = Math.floor(m / 60);
    if (h < 24) return h + 'h ' + pad(m % 60) + 'm';
    return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
  }

  // clock is HH:MM:SS in the browser's time zone, the same whatever its locale.
  function clock(d) {
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }

  // ---- DOM helpers ------------------------------------------------------

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids) {
      if (kid === undefined || kid === null) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return e;
  }

  // num is one number: text as fmt shows it, data-k its name, data-v the
  // value as JSON gave it ("null" when absent).
  function num(key, v, fmt) {
    const raw = typeof v === 'number' ? String(v) : 'null';
    return el('span', { 'data-k': key, 'data-v': raw, class: 'num' }, (fmt || int)(v));
  }

  // txt is one named string (a pool, a state), readable by data-k too.
  function txt(key, v, cls) {
    return el('span', { 'data-k': key, class: cls }, v === undefined || v === null || v === '' ? dash : String(v));
  }

  function td(content, cls) {
    return el('td', { class: cls }, content);
  }

  function fill(tbody, rows, cols, empty) {
    if (rows.length === 0) {
      rows = [el('tr', { class: 'empty' }, el('td', { colspan: String(cols) }, empty))];
    }
    tbody.replaceChildren(...rows);
  }

  function byId(id) {
    return document.getElementById(id);
  }

  function badge(kind) {
    return el('span', { class: 'badge ' + String(kind || '').replace(/[^a-z]/g, '') }, kind || dash);
  }

  // ---- sections ---------------------------------------------------------

  function renderHeader(ov) {
    const leader = byId('leader');
    leader.textContent = ov.leader || 'none';
    leader.title = ov.leader || 'no controller holds the lease';
    const rt = ov.redis_topology || {};
    const redis = byId('redis');
    const masters = (rt.masters || []).join(', ');
    redis.textContent = rt.mode ? rt.mode + (masters ? ' · ' + masters : '') : dash;
    redis.title = rt.mode === 'cluster' ? 'namespace ' + (rt.hash_tag || '') + ' in slot ' + rt.slot + ' on ' + (rt.slot_master || dash)
      : (rt.error || 'the masters serving now');
    const en = ov.engines || {};
    const nats = byId('nats');
    const servers = en.nats_servers || [];
    nats.textContent = servers.length ? servers.length + (servers.length === 1 ? ' server' : ' servers') +
      ' · stream ×' + (en.nats_stream_replicas || 1) : dash;
    nats.title = servers.join(', ') + (en.nats_stream ? ' · stream ' + en.nats_stream : '');
    byId('provider').textContent = en.provider || dash;
    const at = new Date(ov.at);
    const upd = byId('updated');
    upd.replaceChildren('updated ', el('b', { 'data-k': 'at', 'data-v': ov.at }, isNaN(at) ? dash : clock(at)));
  }

  function renderPools(ov) {
    const rows = (ov.pools || []).map((p) => {
      const k = 'pool.' + p.name + '.';
      return el('tr', {},
        td(txt(k + 'name', p.name, 'name')),
        td(badge(p.kind)),
        td(num(k + 'price_per_slot_hour', p.price_per_slot_hour, money), 'n'),
        td(num(k + 'quota', p.quota, p.kind === 'fixed' ? int : () => dash), 'n'),
        td(num(k + 'busy', p.busy), 'n'),
        td(num(k + 'idle', p.idle), 'n'),
        td(num(k + 'workers', p.workers), 'n'),
        td(num(k + 'draining', p.draining), 'n'),
        td(num(k + 'cost_per_hour', p.cost_per_hour, money), 'n strong'));
    });
    fill(byId('pools'), rows, 9, 'no pools configured');
  }

  // renderShares draws a bar per team on the scale of the fixed quota:
  // its share split into own use, slots lent to other teams and idle
  // slots, then what it borrows past its share (on common slots or other
  // teams' shares); the line marks the end of the share. Hidden with
  // shares off.
  function renderShares(ov) {
    const sh = ov.shares;
    byId('shares-panel').hidden = !sh;
    if (!sh) return;
    byId('shares-quota').textContent = String(sh.quota);
    const quota = Math.max(sh.quota, 1);
    const rows = (sh.teams || []).map((t) => {
      const k = 'shares.' + t.team + '.';
      const bar = svgEl('svg', { class: 'sharebar', viewBox: '0 0 ' + quota + ' 10', preserveAspectRatio: 'none',
        role: 'img', 'aria-label': t.team + ': ' + t.used + ' of ' + t.share + ' slots used' });
      let x = 0;
      const seg = (w, cls) => {
        if (w > 0) bar.append(svgEl('rect', { x: x, y: 0, width: w, height: 10, class: cls }));
        x += Math.max(w, 0);
      };
      seg(t.own, 'own');
      seg(t.lent, 'lent');
      seg(t.idle, 'idle');
      seg(t.on_common, 'common');
      seg(t.on_lent, 'borrowed');
      if (t.share > 0) bar.append(svgEl('line', { x1: t.share, x2: t.share, y1: 0, y2: 10, class: 'mark' }));
      const lentTo = Object.entries(t.lent_to || {}).map(([b, v]) => b + ' ' + v).join(', ');
      return el('tr', {},
        td(txt(k + 'team', t.team, 'name')),
        td(bar, 'sharebar-col'),
        td(num(k + 'share', t.share), 'n'),
        td(num(k + 'used', t.used, slots), 'n'),
        td(num(k + 'on_common', t.on_common, slots), 'n'),
        td(num(k + 'on_lent', t.on_lent, slots), 'n'),
        td(el('span', { title: lentTo ? 'lent to ' + lentTo : 'lent to no one' }, num(k + 'lent', t.lent, slots)), 'n'),
        td(num(k + 'idle', t.idle, slots), 'n'),
        td(num(k + 'waiting', t.waiting), 'n'),
        td(num(k + 'owner_wait', t.owner_wait_seconds, (v) => (v > 0 ? dur(v) : dash)), 'n'));
    });
    fill(byId('shares'), rows, 10, 'no team has a share');
  }

  // slots shows a slot count, with one decimal when a share is split.
  function slots(v) {
    return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(1)) : dash;
  }

  function renderWorkers(ov) {
    const rows = (ov.workers || []).map((w) => {
      const k = 'worker.' + w.id + '.';
      return el('tr', {},
        td(el('span', { class: 'mono', title: w.id }, w.id)),
        td(txt(k + 'pool', w.pool)),
        td(badge(w.kind)),
        td(num(k + 'slots', w.slots), 'n'),
        td(num(k + 'busy', w.busy), 'n'),
        td(txt(k + 'state', w.state, 'state ' + (w.state || ''))),
        td(num(k + 'age', w.age_seconds, dur), 'n'),
        td(num(k + 'billed_cost', w.billed_cost, money), 'n'),
        td(isolation(k, w.isolation)),
        td(gpus(k, w)));
    });
    fill(byId('workers'), rows, 10, 'no worker registered');
  }

  // gpus shows a GPU worker's devices as index:job ("-" free), then its
  // gpu_model label; the title of each names the device. A worker
  // without GPUs shows a dash.
  function gpus(k, w) {
    const list = w.gpus || [];
    if (list.length === 0) return txt(k + 'gpus', dash);
    const held = list.filter((g) => g.job).length;
    const kids = list.map((g) => el('span', {
      class: 'gpu mono' + (g.job ? ' held' : ''),
      'data-k': k + 'gpu.' + g.index,
      title: 'GPU ' + g.index + ' ' + g.uuid + ' ' + g.name + ' (' + g.memory_mib + ' MiB)' + (g.job ? ': ' + g.job : ': free'),
    }, g.index + ':' + (g.job || '-')));
    const model = (w.labels || {}).gpu_model;
    return el('span', { class: 'gpus' },
      num(k + 'gpus_held', held), '/' + list.length + ' ', ...kids,
      model ? el('span', { class: 'gpu-model', 'data-k': k + 'gpu_model' }, model) : null);
  }

  // isolation shows a worker's QoS isolation: its cgroup version and how
  // many configured limits are in force; the title lists each limit, and
  // why the ones not in force are not.
  function isolation(k, iso) {
    if (!iso) return txt(k + 'isolation', dash);
    const limits = iso.limits || [];
    const held = limits.filter((l) => l.in_force).length;
    const lines = [iso.mode + ' (requested ' + iso.requested + ')' + (iso.reason ? ': ' + iso.reason : '')];
    for (const l of limits) {
      lines.push(l.group + ' ' + l.limit + ' ' + l.value + ': ' + (l.in_force ? 'in force' : 'NOT in force: ' + l.reason));
    }
    const label = limits.length ? iso.mode + ' ' + held + '/' + limits.length + ' limits' : iso.mode;
    const cls = 'state ' + (held < limits.length || iso.mode === 'off' ? 'warn' : 'ok');
    return el('span', { class: cls, 'data-k': k + 'isolation', title: lines.join('\n') }, label);
  }

  function renderQueues(ov) {
    const rows = (ov.queues || []).map((q) => {
      const k = 'queue.' + q.name + '.';
      return el('tr', {},
        td(txt(k + 'name', q.name, 'name')),
        td(num(k + 'pending', q.pending), 'n'),
        td(num(k + 'running', q.running), 'n'),
        td(num(k + 'oldest', q.oldest_seconds, (v) => (v > 0 ? dur(v) : dash)), 'n'));
    });
    fill(byId('queues'), rows, 4, 'no queues');
  }

  function renderRunning(ov) {
    const jobs = ov.running || [];
    const rows = jobs.map((j) => {
      const k = 'running.' + j.id + '.';
      return el('tr', { 'data-job': j.id },
        td(el('a', { class: 'mono', 'data-k': k + 'id', title: j.id, href: window.BallastConsole.hashWith({ job: j.id }) }, j.id)),
        td(txt(k + 'template', j.template)),
        td(txt(k + 'team', j.team)),
        el('td', {}, txt(k + 'class', j.class), overflowMark(k, j)),
        td(txt(k + 'pool', j.pool)),
        td(el('span', { class: 'mono', 'data-k': k + 'worker', title: j.worker }, j.worker || dash)),
        td(num(k + 'runs', j.runs), 'n'),
        td(num(k + 'attempt', j.attempt), 'n'),
        td(num(k + 'run', j.run_seconds, dur), 'n'),
        td(num(k + 'wait', j.wait_seconds, dur), 'n'),
        td(num(k + 'cost', j.cost, money), 'n'));
    });
    const body = byId('running');
    fill(body, rows, 11, 'nothing running');
    body.dataset.count = String(jobs.length);
    const count = [num('running.count', jobs.length)];
    if (ov.overflowed > 0) count.push(' · ', num('overflowed', ov.overflowed), ' overflowed');
    byId('running-count').replaceChildren(...count);
  }

  // overflowMark flags core work running on on-demand capacity because it
  // waited too long for the quota (rule 7): it is paid at the premium.
  function overflowMark(k, j) {
    if (!j.overflowed) return null;
    return el('span', { class: 'badge overflow', 'data-k': k + 'overflowed', title: 'core job overflowed to on-demand (rule 7)' }, 'overflow');
  }

  function renderKey(ov) {
    const key = ov.key || {};
    const recent = dur(key.recent_seconds);
    for (const e of document.querySelectorAll('.recent')) e.textContent = recent;
    byId('key-wait').replaceChildren(num('key.elastic_wait_p95_seconds', key.elastic_wait_p95_seconds, dur));
    byId('key-starts').replaceChildren(num('key.elastic_starts', key.elastic_starts));
    byId('key-idle-now').replaceChildren(num('key.fixed_idle_now', key.fixed_idle_now, pct));
    byId('key-idle-mean').replaceChildren(num('key.fixed_idle_mean', key.fixed_idle_mean, pct));
    byId('key-preempt').replaceChildren(num('key.preemptions', key.preemptions));
    const kinds = Object.entries(key.preemptions_by_kind || {}).filter(([, n]) => n > 0).sort();
    const parts = [];
    for (const [kind, n] of kinds) {
      if (parts.length) parts.push(', ');
      parts.push(num('key.preemptions.' + kind, n), ' ' + kind);
    }
    if (parts.length === 0) parts.push('none');
    parts.push(' in the last ' + recent);
    byId('key-preempt-kinds').replaceChildren(...parts);

    state.shownSpan = ov.span || '';
    byId('span').textContent = ov.span || dash;
    renderSpan();

    const series = key.series || [];
    const span = series.length ? clock(new Date(series[0].from)) + ' – ' + clock(new Date(ov.at)) : 'no samples yet';
    // A bucket with nothing measured is null, drawn as a gap: before
    // Ballast started, no bucket has data; a bucket without an elastic
    // start has no wait; one without an idle sample has no idle share.
    const wait = series.map((b) => (b.no_data || !b.elastic_starts ? null : b.elastic_wait_p95_seconds));
    const waitMax = chart(byId('chart-wait'), wait, 'line', null);
    axis('axis-wait', 'chart.elastic_wait.max', waitMax, dur, span);
    const idle = series.map((b) => (typeof b.fixed_idle === 'number' ? b.fixed_idle : null));
    chart(byId('chart-idle'), idle, 'line', 1);
    axis('axis-idle', 'chart.fixed_idle.max', 1, pct, span);
    const pre = series.map((b) => (b.no_data ? null : b.preemptions));
    const preMax = chart(byId('chart-preempt'), pre, 'bar', null);
    axis('axis-preempt', 'chart.preemptions.max', preMax, int, span);
  }

  // renderSpan marks the button of the span asked for or, when the API's
  // default was asked for, of the span the series drawn has.
  function renderSpan() {
    const active = state.span || state.shownSpan;
    for (const b of document.querySelectorAll('#spans button')) {
      const on = b.dataset.span === active;
      b.setAttribute('aria-pressed', String(on));
      b.classList.toggle('on', on);
    }
  }

  function axis(id, key, max, fmt, span) {
    byId(id).replaceChildren(el('span', {}, 'top ', num(key, max, fmt)), el('span', {}, span));
  }

  // chart draws values (oldest first; null = no sample) into a 300×60
  // viewBox as a line with its area, or as bars, scaled to max (or to the
  // largest value), and returns the scale's top.
  function chart(svg, values, kind, max) {
    const W = 300;
    const H = 60;
    const top = 4;
    const nums = values.filter((v) => typeof v === 'number');
    if (max === null) max = Math.max(0, ...nums);
    if (!(max > 0)) max = 1; // an empty or all-zero chart still has a scale
    const y = (v) => H - 1 - (Math.min(v, max) / max) * (H - 1 - top);
    const kids = [];
    const n = values.length;
    // Buckets without a value are shaded as gaps, so no data never reads
    // as a zero; a run of them is one band.
    const slot = W / Math.max(n, 1);
    let gaps = 0;
    for (let i = 0; i < n; i++) {
      if (typeof values[i] === 'number') continue;
      let j = i;
      while (j + 1 < n && typeof values[j + 1] !== 'number') j++;
      const x0 = kind === 'bar' || n <= 1 ? i * slot : Math.max(0, (i - 0.5) * (W / (n - 1)));
      const x1 = kind === 'bar' || n <= 1 ? (j + 1) * slot : Math.min(W, (j + 0.5) * (W / (n - 1)));
      kids.push(svgEl('rect', { x: x0.toFixed(1), y: 0, width: Math.max(0.5, x1 - x0).toFixed(1), height: H, class: 'gap' }));
      gaps += j - i + 1;
      i = j;
    }
    kids.push(svgEl('line', { x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5, class: 'base' }));
    if (kind === 'bar') {
      const bw = W / Math.max(n, 1);
      values.forEach((v, i) => {
        if (!(v > 0)) return;
        kids.push(svgEl('rect', { x: i * bw + bw * 0.15, y: y(v), width: bw * 0.7, height: H - 1 - y(v), class: 'bar' }));
      });
    } else {
      const step = n > 1 ? W / (n - 1) : 0;
      const x = (i) => (n > 1 ? i * step : W / 2);
      // Consecutive samples make one segment; a null breaks the line.
      let seg = [];
      const flush = () => {
        if (seg.length === 0) return;
        const pts = seg.map(([i, v]) => x(i).toFixed(1) + ',' + y(v).toFixed(1));
        const first = x(seg[0][0]).toFixed(1);
        const last = x(seg[seg.length - 1][0]).toFixed(1);
        kids.push(svgEl('path', { d: 'M' + first + ',' + (H - 1) + ' L' + pts.join(' L') + ' L' + last + ',' + (H - 1) + ' Z', class: 'area' }));
        kids.push(svgEl('path', { d: 'M' + pts.join(' L'), class: 'line' }));
        if (seg.length === 1) kids.push(svgEl('circle', { cx: first, cy: y(seg[0][1]).toFixed(1), r: 2, class: 'dot' }));
        seg = [];
      };
      values.forEach((v, i) => {
        if (typeof v === 'number') seg.push([i, v]);
        else flush();
      });
      flush();
    }
    svg.replaceChildren(...kids);
    svg.dataset.points = String(nums.length);
    svg.dataset.gaps = String(gaps);
    return max;
  }

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  }

  function renderCost(ov) {
    const c = ov.cost || {};
    byId('cost-total').replaceChildren(num('cost.total', c.total, money));
    const split = [
      ['fixed', 'fixed', c.fixed],
      ['elastic', 'elastic', c.elastic],
      ['idle', 'idle (paid, unused)', c.idle],
      ['lost_work', 'lost work', c.lost_work],
      ['premium', 'elastic premium', c.premium],
    ];
    byId('cost-split').replaceChildren(...split.flatMap(([k, label, v]) => [el('dt', {}, label), el('dd', {}, num('cost.' + k, v, money))]));

    const pools = (c.pools || []).map((p) => {
      const k = 'cost.pool.' + p.pool + '.';
      return el('tr', {},
        td(p.pool, 'name'),
        td(badge(p.kind)),
        td(num(k + 'paid', p.paid, money), 'n'),
        td(num(k + 'used', p.used, money), 'n'),
        td(num(k + 'idle', p.idle, money), 'n'),
        td(num(k + 'idle_share', p.idle_share, pct), 'n'));
    });
    fill(byId('cost-pools'), pools, 6, 'nothing spent yet today');

    const teams = (c.teams || []).map((t) => {
      const k = 'cost.team.' + t.name + '.';
      return el('tr', {},
        td(t.name || dash, 'name'),
        td(num(k + 'cost', t.cost, money), 'n strong'),
        td(num(k + 'slot_hours', t.slot_hours, money), 'n'),
        td(num(k + 'lost_cost', t.lost_cost, money), 'n'),
        td(num(k + 'premium', t.premium, money), 'n'));
    });
    fill(byId('cost-teams'), teams, 5, 'no job charged yet today');
  }

  // loadSettle reads the settlement of the overview's cost window (today)
  // at most once a minute: it prices the whole window, which the overview
  // stream should not do every second. A failure leaves the panel as it
  // was; the overview's own errors are what the alerts are for.
  function loadSettle(ov) {
    const c = ov.cost || {};
    if (!c.from || !c.until || state.settling || Date.now() - state.settledAt < SETTLE_MS) return;
    state.settling = true;
    const url = COSTS + '?settle=true&from=' + encodeURIComponent(c.from) + '&until=' + encodeURIComponent(c.until);
    fetch(url, { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then((res) => (res.ok ? res.json() : null))
      .then((body) => { if (body) renderSettle(body.settlement); })
      .catch(() => {})
      .finally(() => {
        state.settling = false;
        state.settledAt = Date.now();
      });
  }

  // renderSettle draws a row per team, the platform and the loan terms;
  // the panel stays hidden while no team has a share.
  function renderSettle(s) {
    const teams = (s && s.teams) || [];
    const panel = byId('settle-panel');
    panel.dataset.reads = String(Number(panel.dataset.reads || 0) + 1); // for tests: a settlement was drawn
    panel.hidden = !teams.some((t) => t.share > 0);
    if (panel.hidden) return;
    byId('settle-terms').replaceChildren('by ', txt('settle.rule', s.rule), ', loans at ',
      num('settle.loan_price_per_slot_hour', s.loan_price_per_slot_hour, money), ' per slot-h');
    const h = (v) => (typeof v === 'number' ? v.toFixed(2) : dash);
    const rows = teams.map((t) => {
      const name = t.team || '(none)';
      const k = 'settle.team.' + name + '.';
      return el('tr', {},
        td(name, 'name'),
        td(num(k + 'share', t.share), 'n'),
        td(num(k + 'share_cost', t.share_cost, money), 'n'),
        td(num(k + 'used_slot_hours', t.used_slot_hours, h), 'n'),
        td(num(k + 'own_slot_hours', t.own_slot_hours, h), 'n'),
        td(num(k + 'others_slot_hours', t.others_slot_hours, h), 'n'),
        td(num(k + 'common_slot_hours', t.common_slot_hours, h), 'n'),
        td(num(k + 'lent_slot_hours', t.lent_slot_hours, h), 'n'),
        td(num(k + 'borrowed_slot_hours', t.borrowed_slot_hours, h), 'n'),
        td(num(k + 'idle_slot_hours', t.idle_slot_hours, h), 'n'),
        td(num(k + 'quota_charge', t.quota_charge, money), 'n'),
        td(num(k + 'loan_paid', t.loan_paid, money), 'n'),
        td(num(k + 'loan_credit', t.loan_credit, money), 'n'),
        td(num(k + 'elastic', t.elastic, money), 'n'),
        td(num(k + 'net', t.net, money), 'n strong'),
        td(t.idle_cost_alone > 0 ? num(k + 'idle_recovered', t.idle_recovered, pct) : dash, 'n'));
    });
    const p = s.platform || {};
    rows.push(el('tr', { class: 'platform' },
      td('(platform)', 'name'),
      td(num('settle.platform.common', s.common), 'n'),
      td(num('settle.platform.common_cost', p.common_cost, money), 'n'),
      td(''), td(''), td(''), td(''),
      td(num('settle.platform.common_lent_slot_hours', p.common_lent_slot_hours, h), 'n'),
      td(''),
      td(num('settle.platform.common_idle_slot_hours', p.common_idle_slot_hours, h), 'n'),
      td(num('settle.platform.quota_charge', p.quota_charge, money), 'n'),
      td(''),
      td(num('settle.platform.loan_receipts', p.loan_receipts, money), 'n'),
      td(num('settle.platform.elastic_idle', p.elastic_idle, money), 'n'),
      td(num('settle.platform.net', p.net, money), 'n strong'),
      td('')));
    byId('settle').replaceChildren(...rows);
  }

  function renderRecs(ov) {
    const rows = (ov.recommendations || []).map((r, i) => el('tr', { 'data-rec': r.kind || String(i) },
      td(badge(r.severity)),
      td(el('b', {}, r.title || dash)),
      td(r.action || dash),
      td(r.rule_of_thumb || dash, 'muted')));
    fill(byId('recs'), rows, 4, 'no advice: nothing to change');
  }

  // lossText says a recorded loss of Redis data, as `ballast status` does.
  function lossText(l) {
    let t = 'Redis lost its data at ' + l.at;
    if (l.last_seen) t += ' (last seen whole at ' + l.last_seen + ')';
    if (l.detail) t += ': ' + l.detail;
    return t + '. Accepted jobs may be missing: run ballast recover to rebuild them from the event stream.';
  }

  // renderAlerts shows a recorded loss of Redis data first, then the
  // overview's problems and the page's own error (a failed fetch, a
  // missing token), above everything else.
  function renderAlerts(problems) {
    const box = byId('alerts');
    const items = (problems || []).map((p) => el('li', { class: 'problem' }, p));
    if (state.error) items.unshift(el('li', { class: 'error' }, state.error));
    if (lastLoss) items.unshift(el('li', { class: 'error dataloss', 'data-k': 'data_loss' }, lossText(lastLoss)));
    box.hidden = items.length === 0;
    box.replaceChildren(...(items.length ? [el('ul', {}, ...items)] : []));
  }

  let lastProblems = [];
  let lastLoss = null; // the overview's data_loss, kept for setError's redraw

  function render(ov) {
    const at = Date.parse(ov.at) || 0;
    if (at && at < state.lastAt) return; // a poll answer older than a stream event already drawn
    state.lastAt = at;
    renderHeader(ov);
    renderKey(ov);
    renderCost(ov);
    renderPools(ov);
    renderShares(ov);
    renderQueues(ov);
    renderRunning(ov);
    renderWorkers(ov);
    renderRecs(ov);
    loadSettle(ov);
    lastProblems = ov.problems || [];
    lastLoss = ov.data_loss || null;
    renderAlerts(lastProblems);
    state.lastRender = Date.now();
    state.updates++;
    document.body.dataset.updates = String(state.updates);
    window.BallastConsole.ready('overview');
    tick();
  }

  function setError(msg) {
    if (msg === state.error) return;
    state.error = msg;
    renderAlerts(lastProblems);
  }

  // tick keeps the live/stale pill honest between updates.
  function tick() {
    const pill = byId('conn');
    const age = Date.now() - state.lastRender;
    let s;
    let text;
    if (state.lastRender === 0) {
      s = 'connecting';
      text = 'connecting';
    } else if (age > STALE_MS) {
      s = 'stale';
      text = 'stale · ' + dur(age / 1000) + ' without update';
    } else if (state.streaming) {
      s = 'live';
      text = 'live';
    } else {
      s = 'polling';
      text = 'live · polling';
    }
    pill.dataset.state = s;
    pill.textContent = text;
    document.body.dataset.conn = s;
  }

  // ---- transport --------------------------------------------------------

  // spanFromHash is the span the address names (#span=NAME), or '' (the
  // API's default) when it names none or one the API does not offer.
  function spanFromHash() {
    const name = new URLSearchParams(location.hash.replace(/^#/, '')).get('span');
    return SPANS.includes(name) ? name : '';
  }

  // withSpan is url asking for the chosen span.
  function withSpan(url) {
    return state.span ? url + '?span=' + encodeURIComponent(state.span) : url;
  }

  // setSpan switches the page to span name: what is in flight for the old
  // one is dropped, the overview is read again and the stream reopened.
  function setSpan(name) {
    if (name === state.span) return;
    state.span = name;
    state.gen++;
    state.lastAt = 0; // the new span's overview may be cached a little older
    renderSpan();
    closeStream();
    const gen = state.gen;
    load().finally(() => {
      if (gen === state.gen) openStream();
    });
  }

  async function load() {
    const gen = state.gen;
    const url = withSpan(OVERVIEW);
    try {
      const res = await fetch(url, { cache: 'no-store', credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (res.status === 401) {
        throw new Error('Not signed in: open /dashboard?token=YOUR_API_TOKEN once to sign this browser in.');
      }
      if (!res.ok) throw new Error('GET ' + url + ' answered ' + res.status + ' ' + res.statusText);
      const ov = await res.json();
      if (gen !== state.gen) return; // asked for a span no longer shown
      setError('');
      render(ov);
    } catch (e) {
      if (gen !== state.gen) return;
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  function startPolling() {
    if (!state.poll) state.poll = setInterval(load, POLL_MS);
  }

  function stopPolling() {
    if (state.poll) clearInterval(state.poll);
    state.poll = 0;
  }

  function closeStream() {
    if (state.es) state.es.close();
    state.es = null;
    clearTimeout(state.restream);
    state.restream = 0;
  }

  function openStream() {
    closeStream();
    if (!('EventSource' in window)) {
      startPolling();
      return;
    }
    const es = new EventSource(withSpan(STREAM));
    state.es = es;
    es.addEventListener('overview', (ev) => {
      if (es !== state.es) return; // a stream of a span no longer shown
      state.streaming = true;
      stopPolling();
      let ov;
      try {
        ov = JSON.parse(ev.data);
      } catch (e) {
        setError('the overview stream sent a bad event: ' + e.message);
        return;
      }
      setError('');
      render(ov);
    });
    es.addEventListener('error', (ev) => {
      if (es !== state.es) return;
      if (typeof ev.data === 'string') {
        // An "error" event the controller sent (the overview could not be
        // read this tick): the stream itself is fine and goes on.
        let msg = ev.data;
        try {
          msg = JSON.parse(ev.data);
        } catch (e) {
          // not JSON: show it as it came
        }
        setError('The controller could not read the overview: ' + msg);
        return;
      }
      // The browser retries a dropped stream by itself, but the page must
      // not wait on that: poll until events flow again.
      state.streaming = false;
      startPolling();
      tick();
      if (es.readyState === EventSource.CLOSED) {
        // It gave up (an HTTP error or a wrong content type): try a fresh
        // stream later, polling meanwhile.
        state.restream = setTimeout(openStream, RESTREAM_MS);
      }
    });
  }

  function start() {
    state.span = spanFromHash();
    renderSpan();
    byId('spans').addEventListener('click', (ev) => {
      const b = ev.target instanceof Element ? ev.target.closest('button[data-span]') : null;
      if (!b || !SPANS.includes(b.dataset.span)) return;
      // Kept in the address so a reload or a shared link keeps the span;
      // replaced, not pushed, so Back leaves the page as before.
      history.replaceState(null, '', window.BallastConsole.hashWith({ span: b.dataset.span }));
      setSpan(b.dataset.span);
    });
    // An address edited by hand switches too.
    window.addEventListener('hashchange', () => setSpan(spanFromHash()));
    tick();
    setInterval(tick, 1000);
    load().finally(openStream);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
