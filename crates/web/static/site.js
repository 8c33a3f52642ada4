// physiojudge: the one script. Every page works without it; it adds local times,
// live submission states, upload progress with drag-and-drop, and sortable tables.
// No inline scripts anywhere (the Content-Security-Policy forbids them).
'use strict';
document.documentElement.classList.add('js');

// Times stay in UTC as the server wrote them ("2026-12-01 12:00 UTC"); the reader's own
// local time is added beside each (unless the reader is on UTC), with its zone's name.
function localTimes(root) {
  // (dateStyle and timeStyle cannot be combined with timeZoneName: the fields instead.)
  const fmt = new Intl.DateTimeFormat(undefined, {year: 'numeric', month: 'short', day: 'numeric',
    hour: '2-digit', minute: '2-digit', timeZoneName: 'short'});
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  for (const t of root.querySelectorAll('time[datetime]')) {
    if (t.dataset.local) continue;
    const d = new Date(t.getAttribute('datetime'));
    if (isNaN(d) || zone === 'UTC' || zone === 'Etc/UTC') continue;
    t.dataset.local = '1';
    const s = document.createElement('span');
    s.className = 'local';
    s.textContent = ' (' + fmt.format(d) + ' your time)';
    t.after(s);
  }
}

// Countdowns to a deadline, by the server's clock (`data-now`) plus the time the page
// has been open, so a reader's wrong clock does not move a deadline.
function countdowns(root) {
  for (const e of root.querySelectorAll('.countdown[data-until]')) {
    if (!e.dataset.seen) e.dataset.seen = String(Date.now());
    const now = new Date(e.dataset.now).getTime() + (Date.now() - Number(e.dataset.seen));
    const s = Math.max(0, Math.floor((new Date(e.dataset.until).getTime() - now) / 1000));
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    e.textContent = s === 0 ? 'now' : d > 0 ? 'in ' + d + ' d ' + h + ' h' : h > 0 ? 'in ' + h + ' h ' + m + ' min'
      : m > 0 ? 'in ' + m + ' min ' + (s % 60) + ' s' : 'in ' + s + ' s';
  }
}

// Elapsed time by the server's clock (`data-now`, when the page was made) plus the time
// the page has been open, so a reader's wrong clock does not skew it.
function elapsed(root) {
  for (const e of root.querySelectorAll('.elapsed[data-since]')) {
    if (!e.dataset.seen) e.dataset.seen = String(Date.now());
    const now = e.dataset.now ? new Date(e.dataset.now) : new Date(Number(e.dataset.seen));
    const ms = (now - new Date(e.dataset.since)) + (Date.now() - Number(e.dataset.seen));
    const s = Math.max(0, Math.round(ms / 1000));
    e.textContent = '(' + (s < 60 ? s + ' s' : Math.floor(s / 60) + ' min ' + (s % 60) + ' s') + ' so far)';
  }
}

// Live states: each submission on the page follows its event stream; on a change the
// summary is fetched again from the submission's page (the server's own words).
const FINAL = ['scored', 'failed', 'withdrawn'];
function follow(el, id) {
  const es = new EventSource('/submissions/' + encodeURIComponent(id) + '/events');
  // The last stage heard of, put back when the summary is swapped for a fresh one.
  let stage = '';
  const showStage = () => { const s = el.querySelector('.run-stage'); if (s) s.textContent = stage; };
  es.addEventListener('state', async (ev) => {
    let to = '';
    try { to = JSON.parse(ev.data).to; } catch (e) { return; }
    const badge = el.querySelector('[data-state]');
    if (badge && badge.dataset.state === to && !FINAL.includes(to)) return;
    try {
      const r = await fetch('/submissions/' + encodeURIComponent(id), {credentials: 'same-origin'});
      const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
      const fresh = doc.getElementById('summary');
      const old = el.querySelector('#summary');
      if (fresh && old) {
        old.replaceWith(document.importNode(fresh, true));
        localTimes(el); elapsed(el); showStage();
      }
      const fb = fresh && fresh.querySelector('[data-state]');
      const now = fb ? fb.dataset.state : to;
      if (el.id === 'live' && FINAL.includes(now)) {
        // the submission's own page: the stages, scores and logs are new as well
        const main = doc.querySelector('main');
        if (main) { document.querySelector('main').replaceWith(document.importNode(main, true)); init(document); }
      }
    } catch (e) { /* the next event tries again */ }
    if (FINAL.includes(to)) { es.close(); streams -= 1; }
  });
  // A server that knows its local runs' progress sends `progress` events too: the
  // stage under way and its records done (none of the exam's for a team).
  es.addEventListener('progress', (ev) => {
    let p;
    try { p = JSON.parse(ev.data); } catch (e) { return; }
    if (typeof p.stage !== 'string') return;
    stage = '— ' + p.stage + (p.total > 0 ? ' (' + p.done + ' of ' + p.total + ' records)' : '');
    showStage();
  });
}

// A browser opens at most six connections to a site over HTTP/1.1, and each stream
// holds one: follow the first few unfinished submissions, leaving room for the page.
const MAX_STREAMS = 3;
let streams = 0;
function live(root) {
  for (const el of root.querySelectorAll('[data-submission]')) {
    const badge = el.querySelector('[data-state]');
    if (badge && FINAL.includes(badge.dataset.state)) continue;
    if (streams >= MAX_STREAMS) break;
    streams += 1;
    follow(el, el.dataset.submission);
  }
}

// Uploads: the same form, sent with progress; the answer replaces the page's main
// part (a refusal shows in place) or, after a redirect, the submission's page opens.
function upload(root) {
  const form = root.querySelector('form#upload');
  if (!form) return;
  const input = form.querySelector('input[type=file]');
  const drop = form.querySelector('#drop');
  const bar = form.querySelector('#progress');
  const text = form.querySelector('#progress-text');
  for (const ev of ['dragenter', 'dragover']) drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  for (const ev of ['dragleave', 'drop']) drop.addEventListener(ev, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length) {
      input.files = e.dataTransfer.files;
      text.textContent = 'Chosen: ' + input.files[0].name;
    }
  });
  form.addEventListener('submit', (e) => {
    if (!window.FormData || !window.XMLHttpRequest) return;
    e.preventDefault();
    const xhr = new XMLHttpRequest();
    xhr.open('POST', form.action);
    bar.hidden = false;
    xhr.upload.addEventListener('progress', (p) => {
      if (p.lengthComputable) {
        const pc = Math.round(100 * p.loaded / p.total);
        bar.value = pc; bar.textContent = pc + '%';
        text.textContent = 'Uploading: ' + pc + '%';
      }
    });
    let sent = false;
    xhr.upload.addEventListener('load', () => { sent = true; bar.value = 100; text.textContent = 'Uploaded; the server is checking the archive…'; });
    xhr.addEventListener('load', () => {
      const url = new URL(xhr.responseURL || form.action, location.href);
      if (url.pathname !== new URL(form.action, location.href).pathname) { location.assign(url.href); return; }
      const doc = new DOMParser().parseFromString(xhr.responseText, 'text/html');
      const main = doc.querySelector('main');
      if (main) { document.querySelector('main').replaceWith(document.importNode(main, true)); init(document); }
      const nb = document.getElementById('progress');
      const nt = document.getElementById('progress-text');
      if (sent && nb && nt) { nb.hidden = false; nb.value = 100; nb.textContent = '100%'; nt.textContent = 'Uploaded (100%), then refused: the reason is above.'; }
      const r = document.getElementById('refusal');
      if (r) { r.tabIndex = -1; r.focus(); }
    });
    xhr.addEventListener('error', () => { text.textContent = 'The upload broke off. Check your connection and try again.'; });
    xhr.send(new FormData(form));
    form.querySelector('button[type=submit]').disabled = true;
  });
}

// Tables marked data-sortable sort by a column when its header is clicked or pressed.
function sortable(root) {
  for (const table of root.querySelectorAll('table[data-sortable]')) {
    const heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.from(heads).forEach((th, i) => {
      th.dataset.sort = ''; th.tabIndex = 0; th.setAttribute('aria-sort', 'none');
      const go = () => {
        const asc = th.getAttribute('aria-sort') !== 'ascending';
        for (const h of heads) h.setAttribute('aria-sort', 'none');
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        const body = table.tBodies[0];
        const key = (r) => { const c = r.cells[i]; const t = c.querySelector('time'); const v = t ? t.getAttribute('datetime') : c.textContent.trim(); const n = parseFloat(v); return isNaN(n) || t ? v : n; };
        Array.from(body.rows).sort((a, b) => { const x = key(a), y = key(b); const o = x < y ? -1 : x > y ? 1 : 0; return asc ? o : -o; }).forEach((r) => body.appendChild(r));
      };
      th.addEventListener('click', go);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); } });
    });
  }
}

function init(root) { localTimes(root); countdowns(root); elapsed(root); live(root); upload(root); sortable(root); }
document.addEventListener('DOMContentLoaded', () => {
  init(document);
  setInterval(() => { elapsed(document); countdowns(document); }, 1000);
});
