// Ballast console, jobs: the list (GET /api/v1/jobs, filtered and paged by
// the server), and a job's page: its record, parameters, every attempt
// with why it began and ended (GET .../attempts), the checkpoints it keeps
// in the checkpoint store (GET .../checkpoints), its output followed
// live (GET .../logs?after=), and the cancel and retry actions.
'use strict';

(function () {
  const C = window.BallastConsole;
  const { el, byId, text, when, dur, money, bytes, num, badge } = C;
  const LIST = '/api/v1/jobs';
  const REFRESH_MS = 3000; // the list and an open job's record are read again this often
  const LOG_MS = 1500; // an open job's output is followed this often
  const LIMIT = 25;
  const LOG_KEEP = 500; // output lines kept on the page: a tail, not the whole log
  const FILTERS = ['state', 'template', 'team', 'class', 'pool', 'label', 'since', 'id'];

  // ---- the list ---------------------------------------------------------

  // pages holds the cursors of the pages before the one shown, so Newer
  // goes back without the server keeping anything.
  const list = { cursors: [''], next: '', gen: 0 };

  function filterQuery() {
    const q = new URLSearchParams();
    for (const f of FILTERS) {
      const v = (byId('f-' + f).value || '').trim();
      if (v) q.set(f, v);
    }
    return q;
  }

  async function loadList() {
    const q = filterQuery();
    q.set('limit', String(LIMIT));
    const after = list.cursors[list.cursors.length - 1];
    if (after) q.set('after', after);
    const gen = list.gen;
    let page;
    try {
      page = await C.getJSON(LIST + '?' + q.toString());
    } catch (e) {
      if (gen === list.gen) C.setStatus('jobs-status', 'jobs unavailable: ' + e.message, 'error');
      return;
    }
    if (gen !== list.gen) return; // the filters or the page changed meanwhile
    C.setStatus('jobs-status', '');
    const jobs = page.jobs || [];
    list.next = page.next || '';
    const rows = jobs.map((j) => {
      const k = 'jobs.' + j.id + '.';
      const spec = j.spec || {};
      return el('tr', { 'data-job': j.id },
        el('td', {}, el('a', { class: 'mono', href: C.hashWith({ job: j.id }), 'data-k': k + 'id' }, j.id)),
        el('td', {}, el('span', { 'data-k': k + 'template' }, text(spec.template))),
        el('td', {}, el('span', { 'data-k': k + 'team' }, text(spec.team))),
        el('td', {}, el('span', { 'data-k': k + 'class' }, text(spec.class))),
        el('td', {}, badge(j.state, k + 'state')),
        el('td', {}, el('span', { 'data-k': k + 'pool' }, text(j.pool))),
        el('td', { class: 'n' }, el('span', { 'data-k': k + 'runs', title: 'runs: attempts that started on a worker' }, text(j.runs))),
        el('td', { class: 'n' }, el('span', { 'data-k': k + 'attempt', title: 'deliveries (the fencing counter)' }, text(j.attempt))),
        el('td', { class: 'mono' }, text(j.worker)),
        el('td', {}, when(j.created_at)),
        el('td', { class: 'err' }, text(j.last_error)));
    });
    const filtered = FILTERS.some((f) => byId('f-' + f).value.trim() !== '');
    if (rows.length === 0) rows.push(el('tr', { class: 'empty' }, el('td', { colspan: '11' }, filtered ? 'no jobs match these filters' : 'no jobs yet')));
    const body = byId('jobs');
    body.replaceChildren(...rows);
    body.dataset.count = String(jobs.length);
    byId('jobs-page').textContent = 'page ' + list.cursors.length + (page.examined ? ' · ' + page.examined + ' examined' : '');
    byId('jobs-newer').disabled = list.cursors.length <= 1;
    byId('jobs-older').disabled = !list.next;
    C.ready('jobs');
  }

  // restart goes back to the first page, for new filters.
  function restart() {
    list.cursors = [''];
    list.gen++;
    saveFilters();
    loadList();
  }

  // The filters live in the address too (f.state=...), so a filtered list
  // can be shared and survives a reload.
  function saveFilters() {
    const set = {};
    for (const f of FILTERS) set['f.' + f] = byId('f-' + f).value.trim();
    history.replaceState(null, '', C.hashWith(set));
  }

  function loadFilters() {
    const p = C.hashParams();
    for (const f of FILTERS) byId('f-' + f).value = p.get('f.' + f) || '';
  }

  // ---- a job's page -----------------------------------------------------

  // ckSeen is the record's checkpoint state the checkpoints were last read
  // at: they are read again only when it changes, since each read fetches
  // every kept manifest from the store.
  const page = { id: '', lastLog: '', lines: 0, job: null, gen: 0, ckSeen: null };

  // logAfter compares Redis stream IDs ("ms-seq"), so a line read twice
  // (an answer that crossed a newer one) is drawn once.
  function logAfter(a, b) {
    const [am, as] = a.split('-').map(Number);
    const [bm, bs] = (b || '0-0').split('-').map(Number);
    return am > bm || (am === bm && as > bs);
  }

  function field(k, v, key) {
    return el('tr', {}, el('th', {}, k), el('td', { 'data-k': 'job.' + (key || k.replace(/ /g, '_')) }, v instanceof Node ? v : text(v)));
  }

  function renderJob(j, att) {
    const spec = j.spec || {};
    const params = Object.entries(spec.params || {}).map(([k, v]) => k + '=' + JSON.stringify(v)).join(' ');
    const labels = Object.entries(spec.labels || {}).map(([k, v]) => k + '=' + v).join(' ');
    const retryOf = (spec.labels || {}).retry_of;
    const fields = [
      field('template', spec.template), field('state', badge(j.state)), field('team', spec.team), field('class', spec.class),
      field('runs', att ? att.runs : j.runs), field('deliveries', att ? att.deliveries : j.attempt),
      field('queue', j.queue), field('pool', j.pool), field('worker', j.worker), field('exit code', j.exit_code),
      field('last error', j.last_error), field('params', params), field('labels', labels),
      field('command', (spec.command || []).join(' ')),
      field('checkpoint', j.checkpoint), field('checkpoint at', when(j.checkpoint_at), 'checkpoint_at'),
      field('cost', att ? num('job.cost.v', att.cost, money) : undefined, 'cost'),
      field('created', when(j.created_at)), field('started', when(j.started_at)), field('finished', when(j.finished_at)),
    ];
    if (retryOf) fields.push(field('retry of', el('a', { class: 'mono', href: C.hashWith({ job: retryOf }) }, retryOf), 'retry_of'));
    // The attempt field is kept for readers of the earlier page.
    fields.push(field('attempt', j.attempt));
    byId('job-fields').replaceChildren(...fields);
    byId('job-state').replaceChildren(badge(j.state, 'job.state_badge'));
    const terminal = ['succeeded', 'failed', 'cancelled'].includes(j.state);
    byId('job-cancel').disabled = terminal || !!j.cancel_requested;
    byId('job-retry').disabled = !terminal;
    byId('job-params').replaceChildren(...Object.entries(spec.params || {}).map(([k, v]) =>
      el('tr', {}, el('th', {}, k), el('td', { class: 'mono', 'data-k': 'job.param.' + k }, JSON.stringify(v)))));
    if (att) renderAttempts(att);
  }

  function renderAttempts(att) {
    const rows = (att.attempts || []).map((a) => {
      const k = 'attempt.' + a.attempt + '.';
      return el('tr', { 'data-attempt': String(a.attempt), class: a.ran ? '' : 'unrun' },
        el('td', { class: 'n' }, num(k + 'n', a.attempt)),
        el('td', {}, el('span', { 'data-k': k + 'began' }, text(a.began))),
        el('td', {}, el('span', { 'data-k': k + 'queue' }, text(a.queue))),
        el('td', {}, el('span', { 'data-k': k + 'pool' }, a.ran ? text(a.pool) : 'did not run')),
        el('td', { class: 'mono' }, el('span', { 'data-k': k + 'worker' }, a.ran ? text(a.worker) : '')),
        el('td', {}, a.ran ? when(a.start) : ''),
        el('td', { class: 'n' }, a.ran ? num(k + 'seconds', a.seconds, dur) : ''),
        el('td', { class: 'n' }, a.ran ? num(k + 'cost', a.cost, money) : ''),
        el('td', {}, badge(a.outcome, k + 'outcome')),
        el('td', {}, a.reason ? el('span', { 'data-k': k + 'reason' }, a.reason) : null,
          a.exit_code !== undefined && a.exit_code !== null ? el('span', { class: 'hint' }, a.reason ? ' (exit ' : 'exit ', num(k + 'exit', a.exit_code), a.reason ? ')' : '') : null));
    });
    const body = byId('job-attempts');
    body.replaceChildren(...(rows.length ? rows : [el('tr', { class: 'empty' }, el('td', { colspan: '10' }, 'no attempts'))]));
    body.dataset.count = String((att.attempts || []).length);
    byId('job-runs').replaceChildren(num('job.runs', att.runs), ' run', att.runs === 1 ? '' : 's', ' · ',
      num('job.deliveries', att.deliveries), ' deliver', att.deliveries === 1 ? 'y' : 'ies');
    byId('job-reasons').textContent = att.reasons || '';
  }

  // took is an upload's time: most take under a second, which dur would
  // round to nothing.
  const took = (s) => (typeof s === 'number' && s < 1 ? Math.round(s * 1000) + ' ms' : dur(s));

  // renderCheckpoints lists the kept checkpoints, newest first, with what
  // their manifests say; one whose manifest could not be read says why.
  function renderCheckpoints(cks) {
    const list = (cks && cks.checkpoints) || [];
    const rows = list.map((c, i) => {
      const k = 'checkpoint.' + (i + 1) + '.';
      const manifest = el('td', { class: 'mono' }, el('span', { 'data-k': k + 'manifest' }, c.manifest));
      if (c.error) {
        return el('tr', { 'data-checkpoint': String(i + 1), class: 'unrun' }, el('td', { class: 'n' }, String(i + 1)),
          el('td', { colspan: '6' }, 'unreadable: ', el('span', { 'data-k': k + 'error' }, c.error)), manifest);
      }
      return el('tr', { 'data-checkpoint': String(i + 1) },
        el('td', { class: 'n' }, String(i + 1)),
        el('td', {}, el('span', { 'data-k': k + 'created', 'data-v': c.created }, when(c.created))),
        el('td', { class: 'mono' }, el('span', { 'data-k': k + 'token' }, text(c.token))),
        el('td', { class: 'n' }, num(k + 'attempt', c.attempt)),
        el('td', { class: 'n' }, num(k + 'size', c.size_bytes || 0, bytes), el('span', { class: 'hint' }, ' (', num(k + 'files', c.files || 0), ' files)')),
        el('td', { class: 'n' }, num(k + 'uploaded', c.uploaded_bytes || 0, bytes)),
        el('td', { class: 'n' }, num(k + 'upload_seconds', (c.upload_ms || 0) / 1000, took)),
        manifest);
    });
    const body = byId('job-checkpoints');
    body.replaceChildren(...(rows.length ? rows : [el('tr', { class: 'empty' }, el('td', { colspan: '8' }, 'none kept'))]));
    body.dataset.count = String(list.length);
  }

  async function loadJob() {
    const id = C.hashParams().get('job') || '';
    if (id !== page.id) {
      page.id = id;
      page.lastLog = '';
      page.lines = 0;
      page.gen++;
      byId('job-logs').replaceChildren();
      byId('job-logs').dataset.lines = '0';
      byId('job-fields').replaceChildren();
      byId('job-attempts').replaceChildren();
      byId('job-attempts').dataset.count = '0';
      byId('job-checkpoints').replaceChildren();
      byId('job-checkpoints').dataset.count = '0';
      byId('job-ck-note').textContent = '';
      page.ckSeen = null;
      C.setStatus('job-action', '');
    }
    if (!id) return;
    byId('job-id').textContent = id;
    const base = LIST + '/' + encodeURIComponent(id);
    const gen = page.gen;
    let j;
    let att = null;
    try {
      j = await C.getJSON(base);
    } catch (e) {
      if (gen === page.gen) C.setStatus('job-status', 'job unavailable: ' + e.message, 'error');
      return;
    }
    try {
      att = await C.getJSON(base + '/attempts');
    } catch (e) {
      // An older controller without the endpoint: the record still shows.
    }
    // A commit moves checkpoint_at; an end (the checkpoints are deleted)
    // or a new attempt moves the state or the attempt.
    const ckState = [j.checkpoint_at || '', j.state, j.attempt].join('|');
    let cks = null;
    let ckErr = null;
    if (ckState !== page.ckSeen) {
      try {
        cks = await C.getJSON(base + '/checkpoints');
      } catch (e) {
        // An older controller without the endpoint, or a Redis error: the
        // rest of the page still shows, and the next refresh reads again.
        ckErr = 'checkpoints unavailable: ' + e.message;
      }
    }
    if (gen !== page.gen) return; // another job was opened meanwhile
    C.setStatus('job-status', '');
    page.job = j;
    renderJob(j, att);
    if (cks) {
      renderCheckpoints(cks);
      page.ckSeen = ckState;
      byId('job-ck-note').textContent = '';
    }
    if (ckErr !== null) byId('job-ck-note').textContent = ckErr;
    C.ready('job');
  }

  async function followLog() {
    const id = page.id;
    if (!id || C.view() !== 'job') return;
    const gen = page.gen;
    const q = '?limit=500' + (page.lastLog ? '&after=' + encodeURIComponent(page.lastLog) : '');
    let lines;
    try {
      lines = (await C.getJSON(LIST + '/' + encodeURIComponent(id) + '/logs' + q)).lines || [];
    } catch (e) {
      return; // the record's read shows the error
    }
    if (gen !== page.gen) return;
    const out = byId('job-logs');
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    for (const l of lines) {
      if (page.lastLog && !logAfter(l.id, page.lastLog)) continue;
      page.lastLog = l.id;
      out.append(el('span', { class: l.stream === 'stderr' ? 'stderr' : 'stdout' }, '[' + l.attempt + ' ' + l.stream + '] ' + l.text + '\n'));
      page.lines++;
    }
    while (out.childElementCount > LOG_KEEP) out.firstElementChild.remove();
    out.dataset.lines = String(page.lines);
    if (atEnd) out.scrollTop = out.scrollHeight;
    const done = page.job && ['succeeded', 'failed', 'cancelled'].includes(page.job.state);
    byId('job-follow').textContent = done ? 'the job has ended' : 'following live';
    if (page.lines === 0) byId('job-follow').textContent = done ? 'no output kept' : 'following live · no output yet';
  }

  async function act(what) {
    const id = page.id;
    if (!id) return;
    if (what === 'cancel' && !window.confirm('Cancel job ' + id + '?')) return;
    C.setStatus('job-action', what === 'cancel' ? 'cancelling…' : 'retrying…');
    try {
      const res = await C.post(LIST + '/' + encodeURIComponent(id) + '/' + what);
      if (what === 'retry') {
        const nid = res.receipt && res.receipt.job_id;
        C.setStatus('job-action', 'retried as ' + nid, 'ok');
        const a = byId('job-action');
        a.dataset.newJob = nid || '';
        a.append(' · ', el('a', { href: C.hashWith({ job: nid }), class: 'mono', id: 'job-new' }, 'open it'));
        loadList();
      } else {
        C.setStatus('job-action', 'cancel: ' + res.result, 'ok');
      }
      loadJob();
    } catch (e) {
      C.setStatus('job-action', e.message, 'error');
    }
  }

  function start() {
    loadFilters();
    for (const f of FILTERS) {
      const input = byId('f-' + f);
      input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
        clearTimeout(input.debounce);
        input.debounce = setTimeout(restart, input.tagName === 'SELECT' ? 0 : 300);
      });
    }
    byId('jobs-clear').addEventListener('click', () => {
      for (const f of FILTERS) byId('f-' + f).value = '';
      restart();
    });
    byId('jobs-older').addEventListener('click', () => {
      if (!list.next) return;
      list.cursors.push(list.next);
      list.gen++;
      loadList();
    });
    byId('jobs-newer').addEventListener('click', () => {
      if (list.cursors.length <= 1) return;
      list.cursors.pop();
      list.gen++;
      loadList();
    });
    byId('job-cancel').addEventListener('click', () => act('cancel'));
    byId('job-retry').addEventListener('click', () => act('retry'));
    window.addEventListener('hashchange', () => {
      loadJob();
      followLog();
    });
    loadList();
    loadJob().then(followLog);
    setInterval(() => {
      loadList();
      if (C.view() === 'job') loadJob();
    }, REFRESH_MS);
    setInterval(followLog, LOG_MS);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
