// The status page: four views over the daemon's JSON endpoints, refreshed
// every two seconds while the tab is visible. Everything shown comes from the
// API as text (textContent, never HTML), so a pod's name or a pending reason
// cannot inject markup. A token, when the daemon asks for one, is kept in
// sessionStorage for this tab and sent as a bearer header, never in a URL.
'use strict';

const REFRESH_MS = 2000;
const JOBS_CHARTED = 20;  // the newest jobs get charts; the rest are listed
const state = {
  view: 'cluster',
  cluster: { q: '', offset: 0, limit: 50 },
  charts: new Map(),  // job id -> Chart
  lastCounters: null, // {at, counters} of the previous Health refresh
  timer: null,
  blocked: false,     // waiting for a token
};

// ---- calls ---------------------------------------------------------------

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path) {
  const headers = { Accept: 'application/json' };
  const token = sessionStorage.getItem('uvsched-token');
  if (token) headers.Authorization = 'Bearer ' + token;
  const res = await fetch(path, { headers, cache: 'no-store' });
  if (!res.ok) {
    let message = res.status + ' ' + res.statusText;
    try {
      const body = await res.json();
      if (body && (body.error || body.message)) message = body.error || body.message;
    } catch (e) { /* not JSON: the status says enough */ }
    throw new HttpError(res.status, message);
  }
  return res.json();
}

// ---- small DOM helpers ----------------------------------------------------

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// Each cell carries its column's name (data-label): on a phone-sized screen
// the rows are shown as cards, each figure under its name (ui.css).
function fill(tbody, rows, emptyText, columns) {
  tbody.replaceChildren();
  if (rows.length === 0) {
    tbody.append(el('tr', {}, el('td', { colspan: String(columns), class: 'empty', text: emptyText })));
    return;
  }
  const names = [...tbody.closest('table').querySelectorAll('thead th')].map(th => th.textContent);
  for (const cells of rows) {
    tbody.append(el('tr', {}, ...cells.map((c, i) => {
      const td = (c instanceof Node && c.tagName === 'TD') ? c : el('td', {}, c);
      if (names[i]) td.dataset.label = names[i];
      return td;
    })));
  }
}

function facts(dl, pairs) {
  dl.replaceChildren(...pairs.map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', { text: String(v) }))));
}

function number(n, digits = 1) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

function mib(n) { return n >= 1024 ? number(n / 1024, 1) + ' GiB' : number(n, 0) + ' MiB'; }

function duration(seconds) {
  if (seconds < 60) return number(seconds, 1) + ' s';
  if (seconds < 3600) return Math.floor(seconds / 60) + ' min ' + Math.round(seconds % 60) + ' s';
  return Math.floor(seconds / 3600) + ' h ' + Math.round((seconds % 3600) / 60) + ' min';
}

// A bar with its figures written out: readable without colour.
function bar(used, total, format) {
  const share = total > 0 ? Math.min(1, used / total) : 0;
  const track = el('span', { class: 'track', role: 'img', 'aria-label': Math.round(share * 100) + '% in use' },
                   el('span', { class: 'fill' }));
  track.firstChild.style.width = (share * 100).toFixed(1) + '%';
  return el('span', { class: 'bar' }, track,
            el('span', { class: 'figures', text: format(used) + ' of ' + format(total) + ' (' + Math.round(share * 100) + '%)' }));
}

// ---- views ------------------------------------------------------------------

async function showCluster() {
  const c = state.cluster;
  const q = new URLSearchParams({ offset: String(c.offset), limit: String(c.limit) });
  if (c.q) q.set('q', c.q);
  const v = await api('/v1/cluster?' + q);
  const t = v.totals;
  facts(document.getElementById('cluster-totals'), [
    ['Agents', t.agents], ['Connected', t.connected], ['Disconnected', t.disconnected], ['Lost (recent)', t.lost],
    ['CPU in use', number(t.cpus_used) + ' of ' + number(t.cpus)],
    ['Memory in use', mib(t.mem_mib_used) + ' of ' + mib(t.mem_mib)],
    ['Pods running or launched', t.pods], ['Pods pending', t.pods_pending],
  ]);
  const rows = v.agents.map(a => {
    const stateCell = el('td', {}, el('span', { class: 'state-' + a.state, text: a.state }));
    if (a.state === 'lost') {
      return [a.hostname, stateCell, 'lost at ' + a.lost_at, '', '', ''];
    }
    const labels = Object.entries(a.labels || {}).map(([k, val]) => k + '=' + val).join(', ');
    const pods = a.pods === 0 ? 'none' : a.pods + ': ' + a.pod_names.join(', ') + (a.pods > a.pod_names.length ? ', …' : '');
    return [a.hostname, stateCell, bar(a.cpus_used, a.cpus, x => number(x) + ' cpu'), bar(a.mem_mib_used, a.mem_mib, mib),
            pods, el('span', { class: 'labels', text: labels || '—' })];
  });
  fill(document.querySelector('#cluster-agents tbody'), rows, c.q ? 'No agent matches "' + c.q + '".' : 'No agents have subscribed yet.', 6);
  const last = Math.min(v.matched, v.offset + v.agents.length);
  document.getElementById('cluster-page').textContent =
    v.matched === 0 ? '0 agents' : (v.offset + 1) + '–' + last + ' of ' + v.matched + ' agents';
  document.getElementById('cluster-prev').disabled = v.offset === 0;
  document.getElementById('cluster-next').disabled = last >= v.matched;
}

async function showQueue() {
  const [queue, events, groups] = await Promise.all([
    api('/v1/queue?limit=200'), api('/v1/scheduling-events?limit=50'),
    api('/apis/scheduling.x-k8s.io/v1alpha1/podgroups?limit=500'),
  ]);
  const items = groups.items || [];
  document.getElementById('queue-groups-box').hidden = items.length === 0;
  fill(document.querySelector('#queue-groups tbody'), items.map(g => {
    const st = g.status || {};
    return [g.metadata.namespace + '/' + g.metadata.name, st.phase || 'Pending', String((g.spec || {}).minMember || 1),
            String(st.scheduled || 0), String(st.running || 0), String(st.succeeded || 0), String(st.failed || 0)];
  }), 'No pod groups.', 7);
  document.getElementById('queue-summary').textContent =
    queue.pending === 0 ? 'No pod is waiting.' :
    queue.pending + ' pod(s) waiting' + (queue.pending > queue.pods.length ? '; the first ' + queue.pods.length + ' shown' : '') + ', in the order they will be tried.';
  fill(document.querySelector('#queue-pods tbody'), queue.pods.map(p => [
    String(p.position), p.pod, p.group || '—', String(p.priority), duration(p.waiting_seconds), p.reason || 'not tried yet',
  ]), 'Nothing is waiting.', 6);
  fill(document.querySelector('#queue-events tbody'), events.events.map(e => [
    e.time, e.type, e.reason, e.pod, e.message,
  ]), 'No scheduling events yet.', 5);
}

function jobChart(canvas, job) {
  const points = job.history.map(h => ({ epoch: h.epoch, parallelism: h.parallelism, elapsed: h.elapsed_time }));
  const data = {
    labels: points.map(p => p.epoch),
    datasets: [
      { label: 'Parallelism (workers)', data: points.map(p => p.parallelism), yAxisID: 'workers', stepped: true,
        borderColor: '#3b6ea8', backgroundColor: '#3b6ea8', pointStyle: 'rect' },
      { label: 'Epoch time (s)', data: points.map(p => p.elapsed), yAxisID: 'seconds', borderDash: [6, 4],
        borderColor: '#9a3412', backgroundColor: '#9a3412', pointStyle: 'triangle' },
    ],
  };
  const existing = state.charts.get(job.id);
  if (existing && existing.canvas === canvas) {
    existing.data.labels = data.labels;
    existing.data.datasets.forEach((d, i) => { d.data = data.datasets[i].data; });
    existing.update('none');
    return existing;
  }
  if (existing) existing.destroy();
  const chart = new Chart(canvas, {
    type: 'line',
    data,
    options: {
      animation: false, maintainAspectRatio: false, responsive: true,
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { title: { display: true, text: 'Epoch' } },
        workers: { position: 'left', beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Parallelism' } },
        seconds: { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: 'Epoch time (s)' } },
      },
    },
  });
  state.charts.set(job.id, chart);
  return chart;
}

function jobCard(job) {
  let card = document.getElementById('job-' + job.id);
  if (!card) {
    card = el('article', { class: 'job', id: 'job-' + job.id, 'data-job': job.id },
              el('h3', { text: 'Job ' + job.id }), el('dl', { class: 'totals' }),
              el('div', { class: 'chart' }, el('canvas', { 'aria-label': 'Parallelism and epoch time by epoch of job ' + job.id, role: 'img' })),
              el('h4', { text: 'Decisions (newest first; the daemon keeps the last 100)' }),
              el('div', { class: 'scroll decisions' }, el('table', {}, el('thead', {}, el('tr', {},
                el('th', { text: 'Epoch' }), el('th', { text: 'Epoch time' }), el('th', { text: 'Parallelism' }),
                el('th', { text: 'Reason' }), el('th', { text: 'At' }))), el('tbody'))));
  }
  const ps = job.ps || {};
  // The PS's gauges by their own names, less the prefix every one of them has.
  const metrics = Object.entries(job.metrics || {}).map(([k, v]) => k.replace(/^kubeml_job_/, '') + ' ' + number(v, 4)).join(', ');
  facts(card.querySelector('dl'), [
    ['Model', job.request.model_type + ' on ' + job.request.dataset],
    ['Parallelism now', job.parallelism + (job.cap ? ' (cap ' + job.cap + ')' : '')],
    ['Epochs reported', job.epochs_reported + ' of ' + job.request.epochs],
    ['Last epoch time', job.last_elapsed_time ? number(job.last_elapsed_time, 3) + ' s' : '–'],
    ['PS delivery', (ps.state || (ps.start_delivered ? 'delivered' : 'pending')) + (ps.failures ? ', ' + ps.failures + ' failure(s)' : '') +
                    (ps.last_error ? ': ' + ps.last_error : '')],
    ['Polled metrics', metrics || 'none yet'],
    ['Stale', job.stale ? 'yes: no report for ten epochs' : 'no'],
  ]);
  const history = job.history || [];
  fill(card.querySelector('tbody'), history.slice().reverse().map(h => [
    String(h.epoch), number(h.elapsed_time, 3) + ' s', String(h.parallelism), h.reason, new Date(h.at_unix_ms).toISOString(),
  ]), 'No epoch reported yet.', 5);
  return card;
}

async function showTraining() {
  const list = await api('/v1/jobs');
  const jobs = list.jobs.slice().sort((a, b) => b.created_unix_ms - a.created_unix_ms);
  document.getElementById('training-summary').textContent =
    jobs.length === 0 ? 'No training job is running.' :
    jobs.length + ' job(s)' + (list.queue_depth ? ', ' + list.queue_depth + ' waiting to start' : '') +
    (jobs.length > JOBS_CHARTED ? '; the newest ' + JOBS_CHARTED + ' charted' : '') + '.';
  const shown = await Promise.all(jobs.slice(0, JOBS_CHARTED).map(j => api('/v1/jobs/' + encodeURIComponent(j.id))));
  const box = document.getElementById('training-jobs');
  const cards = shown.map(jobCard);
  box.replaceChildren(...cards);
  shown.forEach((job, i) => jobChart(cards[i].querySelector('canvas'), job));
  for (const id of [...state.charts.keys()]) {
    if (!shown.some(j => j.id === id)) { state.charts.get(id).destroy(); state.charts.delete(id); }
  }
}

async function showHealth() {
  const s = await api('/v1/status');
  const store = s.store;
  facts(document.getElementById('health-facts'), [
    ['Role', s.role], ['Version', s.version], ['Uptime', duration(s.uptime_seconds)],
    ['Store', store.backend + (store.address ? ' (' + store.address + ')' : '')],
    ['Store read latency', store.error ? 'failed: ' + store.error : number(store.read_latency_ms, 2) + ' ms'],
    ['Store', store.unavailable ? 'unavailable: ' + store.unavailable : 'available'],
    ['Pods pending', s.pods.pending], ['Pod tasks', s.pods.tasks], ['Training jobs', s.training_jobs],
  ]);
  const now = performance.now();
  const prev = state.lastCounters;
  const names = {
    placements: 'Pods placed', unschedulable: 'Placement attempts that found no room', preemptions: 'Preemptions',
    ml_decisions: 'Parallelism decisions', ps_call_errors: 'Failed calls to the PS', http_requests: 'HTTP requests',
    http_server_errors: 'HTTP 5xx answers', agent_refusals: 'Agent requests refused',
  };
  fill(document.querySelector('#health-counters tbody'), Object.entries(s.counters).map(([k, v]) => {
    const rate = prev ? (v - (prev.counters[k] || 0)) / ((now - prev.at) / 1000) : null;
    return [names[k] || k, String(v), rate === null ? 'next refresh' : number(Math.max(0, rate), 1)];
  }), 'No counters.', 3);
  state.lastCounters = { at: now, counters: s.counters };
}

const VIEWS = { cluster: showCluster, queue: showQueue, training: showTraining, health: showHealth };

// ---- refresh, navigation and the token ------------------------------------------

function askForToken(why) {
  state.blocked = true;
  const form = document.getElementById('token-form');
  document.getElementById('token-why').textContent = why;
  form.hidden = false;
  document.getElementById('token-input').focus();
}

async function refresh() {
  clearTimeout(state.timer);
  const line = document.getElementById('status-line');
  if (state.blocked) return;
  try {
    await VIEWS[state.view]();
    // When the first view stood on the screen with its figures: what the
    // benchmark (bench/status_page.sh) reads, from the start of navigation.
    if (performance.getEntriesByName('uvsched-first-view').length === 0) performance.mark('uvsched-first-view');
    line.textContent = 'Updated ' + new Date().toLocaleTimeString() + '; refreshes every ' + REFRESH_MS / 1000 + ' s.';
    line.className = '';
  } catch (e) {
    if (e instanceof HttpError && e.status === 401) {
      askForToken(sessionStorage.getItem('uvsched-token') ? 'That token was not accepted (' + e.message + '). Enter another.'
                                                          : 'This daemon asks for a token: enter one with at least the reader role.');
      line.textContent = 'Waiting for a token.';
      return;
    }
    line.textContent = e instanceof HttpError && e.status === 403 ? 'This token may not see this view: ' + e.message
                                                                  : 'Could not refresh: ' + e.message;
    line.className = 'error';
  }
  if (!document.hidden) state.timer = setTimeout(refresh, REFRESH_MS);
}

function select(view) {
  state.view = view;
  for (const b of document.querySelectorAll('nav button')) b.setAttribute('aria-pressed', String(b.dataset.view === view));
  for (const s of document.querySelectorAll('main section')) s.hidden = s.dataset.view !== view;
  if (location.hash !== '#' + view) history.replaceState(null, '', '#' + view);
  refresh();
}

function start() {
  for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => select(b.dataset.view));
  document.getElementById('token-form').addEventListener('submit', ev => {
    ev.preventDefault();
    sessionStorage.setItem('uvsched-token', document.getElementById('token-input').value.trim());
    document.getElementById('token-input').value = '';
    document.getElementById('token-form').hidden = true;
    state.blocked = false;
    refresh();
  });
  let typing = null;
  document.getElementById('cluster-search').addEventListener('input', ev => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.cluster.q = ev.target.value.trim(); state.cluster.offset = 0; refresh(); }, 250);
  });
  document.getElementById('cluster-prev').addEventListener('click', () => {
    state.cluster.offset = Math.max(0, state.cluster.offset - state.cluster.limit); refresh();
  });
  document.getElementById('cluster-next').addEventListener('click', () => {
    state.cluster.offset += state.cluster.limit; refresh();
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
  const wanted = location.hash.slice(1);
  select(VIEWS[wanted] ? wanted : 'cluster');
}

start();
