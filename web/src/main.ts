// microscope's browser pages: each view asks typed queries (api.ts) and
// renders the answer; the URL fragment holds the view state (state.ts).
import './style.css';
import { Info, Thread, fmtNs, get } from './api';
import { renderFlame } from './flame';
import { State, readState, writeState } from './state';
import { renderDiff, renderGroups, renderOffcpu, renderSource, renderSummary, renderTable, renderTree } from './tables';
import { renderTimeline } from './timeline';
import { renderZones } from './zones';
import { hideTip } from './tooltip';

let info: Info;

function setupFilters(threads: Thread[]): void {
  const ev = document.getElementById('f-event') as HTMLSelectElement;
  for (const e of info.events) ev.add(new Option(`${e.name} (${e.unit})`, e.name));
  const th = document.getElementById('f-thread') as HTMLSelectElement;
  for (const t of threads) th.add(new Option(`${t.comm}-${t.tid}`, String(t.id)));
  const bind = (id: string, key: keyof State, live = false) => {
    const e = document.getElementById(id) as HTMLInputElement | HTMLSelectElement;
    const apply = () => {
      const s = readState();
      (s as unknown as Record<string, string | undefined>)[key] = e.value || undefined;
      if (key !== 'search') s.zoom = undefined;
      writeState(s);
    };
    e.addEventListener(live ? 'input' : 'change', apply);
  };
  bind('f-event', 'event');
  bind('f-thread', 'thread');
  bind('f-look', 'look');
  bind('f-gran', 'gran');
  bind('f-focus', 'focus');
  bind('f-ignore', 'ignore');
  bind('f-module', 'module');
  bind('f-label', 'label');
  bind('f-search', 'search', true);
  document.getElementById('filters')!.addEventListener('submit', (e) => e.preventDefault());
  document.getElementById('selection-clear')!.addEventListener('click', () =>
    writeState({ ...readState(), start: undefined, end: undefined, zoom: undefined }));
}

function syncFilters(s: State): void {
  const set = (id: string, v?: string) => {
    const e = document.getElementById(id) as HTMLInputElement | HTMLSelectElement;
    if (document.activeElement !== e) e.value = v || '';
  };
  set('f-event', s.event || info.events[info.event]?.name);
  set('f-thread', s.thread);
  set('f-look', s.look || 'logical');
  set('f-gran', s.gran || 'function');
  const sel = document.getElementById('selection')!;
  sel.hidden = !s.start && !s.end;
  document.getElementById('selection-range')!.textContent =
    `${fmtNs(Number(s.start || 0))} – ${s.end ? fmtNs(Number(s.end)) : 'end'}`;
  set('f-focus', s.focus);
  set('f-ignore', s.ignore);
  set('f-module', s.module);
  set('f-label', s.label);
  set('f-search', s.search);
}

let generation = 0;

// The filters and tabs of state s (they need /api/info).
function syncHeader(s: State): void {
  syncFilters(s);
  document.querySelectorAll<HTMLAnchorElement>('#tabs a').forEach((a) => {
    a.classList.toggle('active', a.dataset.view === s.view);
    const t = { ...s, view: a.dataset.view!, zoom: undefined };
    a.href = '#' + new URLSearchParams(Object.entries(t).filter(([, v]) => v) as [string, string][]).toString();
  });
}

async function render(): Promise<void> {
  const s = readState();
  const gen = ++generation;
  syncHeader(s);
  const root = document.getElementById('view')!;
  root.dataset.state = 'loading';
  hideTip();
  if (s.view !== 'flame') document.getElementById('search-result')!.textContent = '';
  try {
    switch (s.view) {
      case 'tree': await renderTree(root, s); break;
      case 'table': await renderTable(root, s); break;
      case 'timeline': await renderTimeline(root, s, info); break;
      case 'zones': await renderZones(root, s); break;
      case 'offcpu': await renderOffcpu(root, s); break;
      case 'groups': await renderGroups(root, s); break;
      case 'source': await renderSource(root, s); break;
      case 'diff': await renderDiff(root, s, info); break;
      case 'summary': renderSummary(root, info); break;
      default: await renderFlame(root, s);
    }
  } catch (e) {
    root.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = String((e as Error).message || e);
    root.appendChild(p);
  }
  if (gen === generation) root.dataset.state = 'ready:' + s.view;
}

// After the next frame is drawn.
function painted(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
}

async function main(): Promise<void> {
  performance.mark('main');
  // The flame graph needs neither /api/info nor the thread list: it is
  // asked alone and drawn first (the first meaningful paint waits for one
  // answer, with nothing else to receive and parse); the header's answers
  // are asked once it is on the screen.
  const first = readState();
  const hash = location.hash;
  const root = document.getElementById('view')!;
  let drawn = false;
  if (first.view === 'flame') {
    root.dataset.state = 'loading';
    try {
      await renderFlame(root, first);
      drawn = true;
      await painted();
    } catch { /* render() below asks again and shows the error */ }
  }
  const [i, threads] = await Promise.all([get<Info>('info'), get<{ threads: Thread[] }>('threads', { limit: 1000 })]);
  performance.mark('info');
  info = i;
  document.title = `microscope — ${info.name}`;
  document.getElementById('capture-name')!.textContent = info.name;
  if (!info.diff) document.querySelector<HTMLElement>('#tabs a[data-view=diff]')!.style.display = 'none';
  if (!info.counts.intervals) document.querySelector<HTMLElement>('#tabs a[data-view=offcpu]')!.style.display = 'none';
  if (!info.counts.probe_records) document.querySelector<HTMLElement>('#tabs a[data-view=zones]')!.style.display = 'none';
  setupFilters(threads.threads);
  window.addEventListener('hashchange', render);
  // A click or a key before the header was set up changed the hash: drawn again.
  if (drawn && location.hash === hash) {
    if (!location.hash) writeState(first, true);
    syncHeader(first);
    root.dataset.state = 'ready:flame';
  } else {
    if (!location.hash) writeState(readState(), true);
    await render();
  }
  if (info.live) watch();
}

// A segment directory (continuous mode): new segments are read by the
// server; the page asks /api/info now and then and redraws when it changed.
const WATCH_MS = 5000;

function watch(): void {
  const badge = document.getElementById('live')!;
  badge.hidden = false;
  badge.textContent = `live: ${info.segments} segments`;
  setInterval(async () => {
    try {
      const i = await get<Info>('info');
      if (i.version === info.version) return;
      info = i;
      badge.textContent = `live: ${info.segments} segments (updated ${new Date().toLocaleTimeString()})`;
      await render();
    } catch { /* the next look */ }
  }, WATCH_MS);
}

main().catch((e) => {
  document.getElementById('view')!.textContent = 'cannot load the capture: ' + e;
});
