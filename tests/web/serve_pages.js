// Drive `microscope serve`'s pages in headless Debian chromium
// (playwright-core) and report what they show, for tests/e2e/test_serve.py.
//
// usage: node serve_pages.js SPEC_JSON
//   SPEC: {"base": "http://127.0.0.1:PORT/", "shots": DIR,
//          "flame": {"name": FUNC, "search": REGEX},   // optional sections
//          "timeline": {"tid": N},
//          "table": {},
//          "diff": {"hash": "start=..&end=.."},           // hash: optional extra state
//          "diffbase": {"start_ms": MS, "drag": [F0, F1]},  // the diff view's base part
//          "modules": {},                                // granularity selector -> module
//          "source": {"name": FUNC, "hash": H},          // table row click -> source view (table at #H)
//          "zone": {},                                   // drag across the timeline
//          "zones": {"site": NAME},                      // zones table: sort, click a site
//          "groups": {"hash": "start=..&end=.."},         // the groups view under a state
//          "paint": {"cgroup": PROCS}}                      // bench/serve.py
// Prints one JSON line with one result object per section and "errors"
// (page errors, console errors, timeouts).  Screenshots go to SHOTS/<section>*.png.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const spec = JSON.parse(process.argv[2]);
const errors = [];
const out = { errors };

async function ready(page, view) {
  await page.waitForFunction((v) => document.getElementById('view').dataset.state === 'ready:' + v,
    view, { timeout: 30000 });
}

async function open(page, hash, view) {
  await page.goto(spec.base + '#' + hash);
  await ready(page, view);
}

// Every fetch() the page makes, with how many flame graph boxes were in
// the document when it asked: the first paint's order.
const FETCHES = `(() => {
  const f = window.fetch;
  window.__fetches = [];
  window.fetch = function (u, ...rest) {
    window.__fetches.push([String(u), document.querySelectorAll('#view .flame .frame').length]);
    return f.call(this, u, ...rest);
  };
})();`;

async function flame(page, s) {
  const r = {};
  await open(page, 'view=flame', 'flame');
  r.fetches = await page.evaluate(() => window.__fetches);
  r.graphWidth = await page.$eval('#view', (e) => e.clientWidth);
  r.title = await page.title();
  const frames = () => page.$$eval('.frame', (els) => els.map((e) => ({
    id: e.dataset.id, name: e.dataset.name, share: e.dataset.share, title: e.title,
    width: e.getBoundingClientRect().width, match: e.classList.contains('match') })));
  const all = await frames();
  r.nframes = all.length;
  r.boxWidth = await page.$eval('.flame', (e) => e.getBoundingClientRect().width);
  const mine = all.filter((f) => f.name === s.name);
  mine.sort((a, b) => parseFloat(b.share) - parseFloat(a.share));
  r.hot = mine[0] || null;
  await page.screenshot({ path: path.join(spec.shots, 'flame.png'), fullPage: true });
  if (r.hot) {
    // Click zooms: the frame then spans the whole width and the URL holds it.
    await page.click(`.frame[data-id="${r.hot.id}"]`);
    await page.waitForFunction((id) => location.hash.includes('zoom=' + id), r.hot.id);
    await ready(page, 'flame');
    const z = await page.$eval(`.frame[data-id="${r.hot.id}"]`, (e) => e.getBoundingClientRect().width);
    r.zoomedWidth = z;
    r.zoomHash = await page.evaluate(() => location.hash);
    await page.screenshot({ path: path.join(spec.shots, 'flame-zoomed.png'), fullPage: true });
  }
  // Search highlights: from the unzoomed view, type the name.
  await open(page, 'view=flame', 'flame');
  await page.fill('#f-search', s.search);
  await page.waitForFunction(() => location.hash.includes('search='));
  await ready(page, 'flame');
  const after = await frames();
  r.matched = after.filter((f) => f.match).map((f) => f.name);
  r.unmatched = after.filter((f) => !f.match).length;
  r.searchShare = await page.$eval('#search-result', (e) => e.dataset.share);
  await page.screenshot({ path: path.join(spec.shots, 'flame-search.png'), fullPage: true });
  return r;
}

async function timeline(page, s) {
  await open(page, 'view=timeline', 'timeline');
  const ivs = await page.$$eval('rect.offcpu', (els) => els.map((e) => ({
    id: e.dataset.id, tid: Number(e.dataset.tid), ns: Number(e.dataset.ns), state: e.dataset.state,
    cause: e.dataset.cause, waker: e.dataset.waker, clipped: e.dataset.clipped === '1', cls: e.getAttribute('class'),
    fill: getComputedStyle(e).fill, title: e.querySelector('title').textContent })));
  const lanes = await page.$$eval('.lane', (els) => els.map((e) => Number(e.dataset.tid)));
  const zones = await page.$$eval('rect.zone', (els) => els.map((e) => ({
    site: e.dataset.site, tid: Number(e.dataset.tid), ns: Number(e.dataset.ns),
    width: e.getBoundingClientRect().width, title: e.querySelector('title').textContent })));
  await page.screenshot({ path: path.join(spec.shots, 'timeline.png'), fullPage: true });
  let detail = '';
  const first = ivs.find((i) => i.tid === s.tid && i.ns >= 50e6);
  if (first) {
    await page.click(`rect.offcpu[data-id="${first.id}"]`, { force: true });
    detail = await page.$eval('#interval-detail', (e) => e.textContent);
  }
  return { intervals: ivs.filter((i) => i.tid === s.tid), lanes, detail, zones };
}

// The zones table as shown (raw values from data-value, text as read),
// sorted by total (the default) and by count; then a click on site NAME
// opens the timeline: which zone bars are highlighted, faded, and the marks.
async function zones(page, s) {
  await open(page, 'view=zones', 'zones');
  const rows = () => page.$$eval('#zones tr[data-site]', (els) => els.map((e) => {
    const o = { site: e.dataset.site, id: Number(e.dataset.id), pid: Number(e.querySelectorAll('td')[1].textContent), text: {} };
    e.querySelectorAll('td[data-key]').forEach((td) => { o[td.dataset.key] = Number(td.dataset.value); o.text[td.dataset.key] = td.textContent; });
    return o;
  }));
  const r = { byTotal: await rows(), head: await page.$eval('#zones-head', (e) => e.textContent) };
  await page.screenshot({ path: path.join(spec.shots, 'zones.png'), fullPage: true });
  await page.click('th[data-sort="count"]');
  await page.waitForFunction(() => location.hash.includes('sort=count'));
  await ready(page, 'zones');
  r.byCount = await rows();
  await page.click(`#zones tr[data-site="${s.site}"]`);
  await page.waitForFunction(() => location.hash.includes('view=timeline'));
  await ready(page, 'timeline');
  r.hash = await page.evaluate(() => location.hash);
  r.highlighted = await page.$$eval('rect.zone.highlight', (els) => els.map((e) => e.dataset.site));
  r.faded = await page.$$eval('rect.zone.faded', (els) => els.map((e) => e.dataset.site));
  r.marks = await page.$$eval('rect.mark', (els) => els.map((e) => ({
    site: e.dataset.site, value: Number(e.dataset.value), tid: Number(e.dataset.tid), time: Number(e.dataset.time),
    x: e.getBoundingClientRect().left })));
  await page.screenshot({ path: path.join(spec.shots, 'zones-timeline.png'), fullPage: true });
  return r;
}

async function table(page) {
  await open(page, 'view=table', 'table');
  const rows = () => page.$$eval('#functions tr[data-name]', (els) => els.map((e) => {
    const td = e.querySelectorAll('td');
    return { name: e.dataset.name, self: Number(td[1].textContent), total: Number(td[3].textContent) };
  }));
  const bySelf = await rows();
  await page.click('th[data-sort="total"]');
  await page.waitForFunction(() => location.hash.includes('sort=total'));
  await ready(page, 'table');
  const byTotal = await rows();
  await page.screenshot({ path: path.join(spec.shots, 'table.png'), fullPage: true });
  return { bySelf: bySelf.slice(0, 30), byTotal: byTotal.slice(0, 30) };
}

async function diff(page, s) {
  await open(page, 'view=diff' + (s.hash ? '&' + s.hash : ''), 'diff');
  const rows = await page.$$eval('#diff tr[data-name]', (els) => els.map((e) => ({
    name: e.dataset.name, delta: Number(e.dataset.delta),
    z: (e.querySelector('span.z') || {}).textContent, significant: e.dataset.significant === 'true' })));
  const head = await page.$eval('#diff-head', (e) => ({ total: Number(e.dataset.total),
    baseTotal: Number(e.dataset.baseTotal), text: e.textContent }));
  const columns = await page.$$eval('#diff tr th', (els) => els.map((e) => e.textContent));
  const notes = await page.$$eval('.diff-note', (els) => els.map((e) => e.textContent));
  await page.screenshot({ path: path.join(spec.shots, 'diff.png'), fullPage: true });
  return { rows: rows.slice(0, 20), head, columns, notes };
}

// The diff view's base part: typed into its "from" input (ms from the
// base's origin), then dragged across the base's bar from fraction F0 to
// F1 of its width; each time the URL and the rows it then shows.
async function diffbase(page, s) {
  const rows = () => page.$$eval('#diff tr[data-name]', (els) => els.map((e) => ({
    name: e.dataset.name, delta: Number(e.dataset.delta) })));
  const head = () => page.$eval('#diff-head', (e) => ({ total: Number(e.dataset.total),
    baseTotal: Number(e.dataset.baseTotal), text: e.textContent }));
  const state = async () => ({ hash: await page.evaluate(() => location.hash), rows: await rows(), head: await head() });
  const r = {};
  await open(page, 'view=diff', 'diff');
  r.whole = await state();
  await page.fill('#base-start', String(s.start_ms));
  await page.press('#base-start', 'Enter');
  await page.waitForFunction(() => location.hash.includes('base_start='));
  await ready(page, 'diff');
  r.typed = await state();
  await page.screenshot({ path: path.join(spec.shots, 'diff-base-typed.png'), fullPage: true });
  const bar = await page.$eval('#base-bar', (e) => { const b = e.getBoundingClientRect(); return { x: b.left, y: b.top, w: b.width, h: b.height }; });
  const before = r.typed.hash;
  await page.mouse.move(bar.x + bar.w * s.drag[0] + 1, bar.y + bar.h / 2);
  await page.mouse.down();
  await page.mouse.move(bar.x + bar.w * (s.drag[0] + s.drag[1]) / 2, bar.y + bar.h / 2, { steps: 5 });
  await page.mouse.move(bar.x + bar.w * s.drag[1], bar.y + bar.h / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction((h) => location.hash !== h, before);
  await ready(page, 'diff');
  r.dragged = await state();
  await page.screenshot({ path: path.join(spec.shots, 'diff-base-dragged.png'), fullPage: true });
  await page.click('#base-whole');
  await page.waitForFunction(() => !location.hash.includes('base_'));
  await ready(page, 'diff');
  r.cleared = await state();
  return r;
}

// The granularity selector set to module: the flame graph's frames and the
// table's rows are then modules.
// The groups view (by thread) under a state: its rows' names and samples,
// and the line above them.
async function groups(page, s) {
  await open(page, 'view=groups&group=thread' + (s.hash ? '&' + s.hash : ''), 'groups');
  const rows = await page.$$eval('#groups tr[data-name]', (els) => els.map((e) => {
    const td = e.querySelectorAll('td');
    return { name: e.dataset.name, samples: Number(td[td.length - 1].textContent) };
  }));
  const head = await page.$eval('#groups', (t) => t.previousElementSibling.textContent);
  return { rows, head };
}

async function modules(page) {
  await open(page, 'view=flame', 'flame');
  await page.selectOption('#f-gran', 'module');
  await page.waitForFunction(() => location.hash.includes('gran=module'));
  await ready(page, 'flame');
  const frames = await page.$$eval('.frame', (els) => els.map((e) => ({
    id: e.dataset.id, name: e.dataset.name, share: e.dataset.share })));
  await page.screenshot({ path: path.join(spec.shots, 'modules-flame.png'), fullPage: true });
  await page.click('#tabs a[data-view="table"]');
  await ready(page, 'table');
  const rows = await page.$$eval('#functions tr[data-name]', (els) => els.map((e) => {
    const td = e.querySelectorAll('td');
    return { name: e.dataset.name, self: Number(td[1].textContent), total: Number(td[3].textContent) };
  }));
  const hash = await page.evaluate(() => location.hash);
  await page.screenshot({ path: path.join(spec.shots, 'modules-table.png'), fullPage: true });
  return { frames, rows, hash };
}

let userDir = null;

// CPU seconds (utime + stime, proc(5) fields 14, 15) of this run's chromium:
// every process whose command line names its profile directory, so other
// browsers on a shared machine are not counted.
function chromiumCpu(by) {
  const tick = 100; // USER_HZ on Linux
  let sum = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (!cmd.includes(userDir)) continue;
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
      const t = (Number(f[11]) + Number(f[12])) / tick;
      sum += t;
      if (by) {
        const m = /--type=([a-z-]+)/.exec(cmd);
        const k = m ? m[1] + (/--utility-sub-type=([\w.]+)/.exec(cmd) || ['', ''])[1] : 'browser';
        by[k] = (by[k] || 0) + t;
      }
    } catch (e) { /* exited */ }
  }
  return sum;
}

async function source(page, s) {
  await open(page, s.hash || 'view=table', 'table');
  await page.click(`#functions tr[data-name="${s.name}"]`);
  await page.waitForFunction(() => location.hash.includes('view=source'));
  await ready(page, 'source');
  const rows = await page.$$eval('table.source tr[data-line]', (els) => els.map((e) => ({
    line: Number(e.dataset.line), self: e.dataset.self ? Number(e.dataset.self) : null,
    total: e.dataset.total ? Number(e.dataset.total) : null, text: e.querySelector('pre').textContent })));
  const notes = await page.$$eval('#view .note', (els) => els.map((e) => e.textContent));
  const head = await page.$eval('#view > div', (e) => e.textContent);
  await page.screenshot({ path: path.join(spec.shots, 'source.png'), fullPage: true });
  return { hash: await page.evaluate(() => location.hash), rows, notes, head };
}

// A time selection: drag across the middle half of the timeline's lanes;
// the URL then holds start/end and the flame graph answers for them.
async function zone(page) {
  await open(page, 'view=timeline', 'timeline');
  const lane = await page.$eval('.lane svg', (e) => { const r = e.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
  await page.mouse.move(lane.x + lane.w * 0.25, lane.y + 4);
  await page.mouse.down();
  await page.mouse.move(lane.x + lane.w * 0.5, lane.y + 4, { steps: 5 });
  await page.mouse.move(lane.x + lane.w * 0.75, lane.y + 4, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => location.hash.includes('start=') && location.hash.includes('end='));
  await ready(page, 'timeline');
  const hash = await page.evaluate(() => location.hash);
  const shade = await page.$eval('#zone', (e) => ({ hidden: e.hidden, start: e.dataset.start, end: e.dataset.end }));
  const chip = await page.$eval('#selection', (e) => ({ hidden: e.hidden, text: e.textContent }));
  await page.screenshot({ path: path.join(spec.shots, 'zone.png'), fullPage: true });
  await page.click('#tabs a[data-view="flame"]');
  await ready(page, 'flame');
  const flameHash = await page.evaluate(() => location.hash);
  const total = await page.$eval('#flame-head', (e) => Number(e.dataset.total));
  await page.click('#selection-clear');
  await page.waitForFunction(() => !location.hash.includes('start='));
  await ready(page, 'flame');
  const whole = await page.$eval('#flame-head', (e) => Number(e.dataset.total));
  return { hash, shade, chip, flameHash, total, whole };
}

// The page's own clock at the first frame drawn after the flame graph's
// boxes are in the document (the second animation frame after the first
// .frame appears): what the harness's round trips to the page do not delay.
const PAINTED = `(() => {
  const mo = new MutationObserver(() => {
    if (!document.querySelector('#view .flame .frame')) return;
    mo.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__painted = performance.now(); }));
  });
  mo.observe(document, { childList: true, subtree: true });
})();`;

// First meaningful paint: navigation start to the flame graph drawn, in ms
// (wall clock: on a loaded machine mostly waiting for a CPU), and the CPU
// work it took: the renderer's main thread (CDP ThreadTime), every
// chromium process of this run (/proc), for bench/serve.py to add the
// server's.
async function paint(page) {
  const runs = [], painted = [], cpu = [], thread = [], kinds = [];
  let cold = null;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const metric = async (name) => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === name).value;
  for (let i = 0; i < 3; i++) {
    await page.goto('about:blank');
    const k0 = {};
    const c0 = chromiumCpu(k0);
    const t0 = await metric('ThreadTime');
    await page.goto(spec.base + '#view=flame');
    await ready(page, 'flame');
    runs.push(await page.evaluate(() => performance.now()));
    painted.push(await page.evaluate(() => window.__painted));
    if (i === 0) {
      cold = await page.evaluate(() => ({
        marks: performance.getEntriesByType('mark').map((m) => [m.name, Math.round(m.startTime)]),
        resources: performance.getEntriesByType('resource').map((r) => [r.name.replace(/^https?:\/\/[^/]+/, '').slice(0, 24),
          Math.round(r.startTime), Math.round(r.responseStart), Math.round(r.responseEnd)]),
        nav: (({ responseEnd, domInteractive, domContentLoadedEventEnd }) => [responseEnd, domInteractive, domContentLoadedEventEnd].map(Math.round))(performance.getEntriesByType('navigation')[0]),
      }));
    }
    thread.push(Math.round(1000 * (await metric('ThreadTime') - t0)));
    const k1 = {};
    cpu.push(Math.round(1000 * (chromiumCpu(k1) - c0)));
    kinds.push(Object.fromEntries(Object.keys(k1).map((k) => [k, Math.round(1000 * (k1[k] - (k0[k] || 0)))])));
  }
  // The same navigation to a static asset of the server: what chromium
  // spends on any navigation, for comparison.
  const baseline = [];
  for (let i = 0; i < 3; i++) {
    await page.goto('about:blank');
    const c0 = chromiumCpu();
    await page.goto(spec.base + 'favicon.svg');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    baseline.push(Math.round(1000 * (chromiumCpu() - c0)));
  }
  await page.goto(spec.base + '#view=flame');
  await ready(page, 'flame');
  const resources = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => ({
    name: r.name.replace(/^https?:\/\/[^/]+/, ''), start: Math.round(r.startTime), ms: Math.round(r.duration) })));
  const nav = await page.evaluate(() => { const n = performance.getEntriesByType('navigation')[0]; return { dcl: Math.round(n.domContentLoadedEventEnd), load: Math.round(n.loadEventEnd) }; });
  const frames = await page.$$eval('.frame', (els) => els.length);
  await page.screenshot({ path: path.join(spec.shots, 'paint.png') });
  const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => [m.name, Math.round(m.startTime)]));
  return { ms: runs, painted_ms: painted, cold, chromium_cpu_ms: cpu, baseline_cpu_ms: baseline, renderer_thread_ms: thread, cpu_by_process: kinds, frames, resources, nav, marks };
}

async function main() {
  fs.mkdirSync(spec.shots, { recursive: true });
  userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ms-chromium-'));
  const context = await chromium.launchPersistentContext(userDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const requests = [];
  try {
    if (spec.paint && spec.paint.cgroup) {
      // Only this run's chromium is held to the bench's CPU quota (not node,
      // whose protocol work is the harness's): its processes move now, the
      // ones it starts later inherit the cgroup.
      for (const pid of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        try {
          if (fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(userDir)) fs.writeFileSync(spec.paint.cgroup, pid);
        } catch (e) { /* exited */ }
      }
    }
    if (spec.paint) await context.addInitScript(PAINTED);
    if (spec.flame) await context.addInitScript(FETCHES);
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    page.on('request', (r) => requests.push(r.url()));
    for (const [name, fn] of [['flame', flame], ['timeline', timeline], ['table', table], ['diff', diff], ['diffbase', diffbase], ['modules', modules], ['source', source], ['zone', zone], ['zones', zones], ['groups', groups], ['paint', paint]]) {
      if (!spec[name]) continue;
      try {
        out[name] = await fn(page, spec[name]);
      } catch (e) {
        errors.push(name + ': ' + e.message);
        await page.screenshot({ path: path.join(spec.shots, name + '-failed.png'), fullPage: true }).catch(() => {});
      }
    }
  } finally {
    await context.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  // Offline: every request the pages made went to the server itself.
  out.foreign = requests.filter((u) => !u.startsWith(spec.base));
  out.paths = [...new Set(requests.filter((u) => u.startsWith(spec.base)).map((u) => u.slice(spec.base.length - 1).split('?')[0]))];
  console.log(JSON.stringify(out));
  process.exit(errors.length ? 1 : 0);
}

main().catch((e) => { errors.push(String(e && e.stack || e)); console.log(JSON.stringify(out)); process.exit(1); });
