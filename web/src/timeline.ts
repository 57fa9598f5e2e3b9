// Per-thread timeline: on-CPU sample density per bucket (/api/lanes) and
// off-CPU intervals coloured by state with links to their wakers
// (/api/intervals).  Click an interval for its stack and its waker's stack.
// Zones the program marked with the probes SDK (/api/zones) are thin bars
// along the top of their thread's lane, one row per nesting depth; the
// site chosen in the Zones table (site= in the URL) is drawn highlighted
// and the others faded.  Marks are ticks across the lane's top half.
import { Info, Interval, Intervals, Lanes, Zones, fmtNs, get } from './api';
import { State, writeState } from './state';
import { showTip, hideTip } from './tooltip';

const SVGNS = 'http://www.w3.org/2000/svg';
const LANE_H = 32;
const NAME_W = 180;
const VIEW_W = 1000;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

export function stateClass(state: string): string {
  return 'state-' + state.split(' ')[0];
}

export function wakerText(iv: Interval): string {
  const frames = iv.waker_stack.slice(0, 6).map((f) => f.name + (f.kind === 'kernel' ? ' [k]' : ''));
  const who = iv.waker ? `${iv.waker.comm}-${iv.waker.tid}` : iv.cause === '-' ? 'unknown' : iv.cause;
  return who + (frames.length ? ' (' + frames.join(' < ') + ')' : '');
}

export async function renderTimeline(root: HTMLElement, s: State, info: Info): Promise<void> {
  const buckets = 500;
  const noZones: Zones = { total: 0, offset: 0, unmatched_begins: 0, unmatched_ends: 0, clipped: 0, sites: [], zones: [], marks: [], marks_total: 0 };
  const [lanes, ivs, zs] = await Promise.all([
    get<Lanes>('lanes', { thread: s.thread, buckets, limit: 256 }),
    get<Intervals>('intervals', { thread: s.thread, limit: 5000 }),
    info.counts.probe_records ? get<Zones>('zones', { thread: s.thread, limit: 5000 }) : Promise.resolve(noZones),
  ]);
  root.innerHTML = '';
  const siteName = new Map(zs.sites.map((st) => [st.id, st.name]));
  const legend = document.createElement('div');
  legend.className = 'legend';
  legend.innerHTML = '<span><i style="background:#1e88e5"></i>on-CPU samples</span>' +
    ['runnable', 'sleep', 'disk', 'stopped', 'other'].map((st) => `<span><i class="" style="background:${({ runnable: '#fb8c00', sleep: '#8e24aa', disk: '#e53935', stopped: '#6d4c41', other: '#757575' } as Record<string, string>)[st]}"></i>${st}</span>`).join('') +
    '<span><i style="background:#43a047"></i>waker link</span>' +
    zs.sites.filter((st) => st.count).map((st) => `<span><i style="background:hsl(${(st.id * 67) % 360}, 65%, 45%)"></i>zone ${st.name.replace(/[<>&"]/g, '')}</span>`).join('');
  root.appendChild(legend);
  const span = lanes.bucket_ns * lanes.nbuckets;
  root.appendChild(Object.assign(document.createElement('div'), {
    textContent: `${lanes.nlanes} threads over ${fmtNs(span)}; ${ivs.total} off-CPU intervals` + (ivs.total > ivs.intervals.length ? ` (first ${ivs.intervals.length} shown)` : '') +
      (zs.total ? `; ${zs.total} zones` + (zs.total > zs.zones.length ? ` (first ${zs.zones.length} shown)` : '') : '') +
      (zs.marks_total ? `; ${zs.marks_total} marks` + (zs.marks_total > zs.marks.length ? ` (first ${zs.marks.length} shown)` : '') : '') +
      (s.site && siteName.has(Number(s.site)) ? `; zones of ${siteName.get(Number(s.site))} highlighted` : ''),
  }));
  const box = document.createElement('div');
  box.style.position = 'relative';
  root.appendChild(box);
  const laneOf = new Map<number, number>();
  const groups = new Map<number, SVGSVGElement>();
  lanes.lanes.forEach((ln, i) => {
    laneOf.set(ln.thread.id, i);
    const div = document.createElement('div');
    div.className = 'lane';
    div.dataset.thread = String(ln.thread.id);
    div.dataset.tid = String(ln.thread.tid);
    const name = document.createElement('div');
    name.className = 'lane-name';
    name.textContent = `${ln.thread.comm}-${ln.thread.tid}`;
    name.title = `thread ${ln.thread.tid} of ${ln.thread.process_comm} (pid ${ln.thread.pid})`;
    div.appendChild(name);
    const g = svg('svg', { viewBox: `0 0 ${VIEW_W} 28`, preserveAspectRatio: 'none' });
    const max = Math.max(1, ...ln.samples);
    const bw = VIEW_W / lanes.nbuckets;
    ln.samples.forEach((n, b) => {
      if (!n) return;
      const h = 13 * n / max;
      g.appendChild(svg('rect', { class: 'density', x: b * bw, y: 14 - h, width: bw, height: h }));
    });
    div.appendChild(g);
    box.appendChild(div);
    groups.set(ln.thread.id, g);
  });
  const xOf = (ns: number) => VIEW_W * (ns - lanes.start_ns) / span;
  const detail = document.createElement('div');
  detail.id = 'interval-detail';
  const links: [Interval, number, number][] = [];
  for (const iv of ivs.intervals) {
    const g = groups.get(iv.thread.id);
    if (!g) continue;
    const x = xOf(iv.start_ns);
    const clipped = !(iv.start_known && iv.end_known);
    const r = svg('rect', { class: 'offcpu ' + stateClass(iv.state) + (clipped ? ' clipped' : ''), x, y: 16, width: Math.max(0.6, xOf(iv.end_ns) - x), height: 11 });
    const text = `${iv.state} for ${fmtNs(iv.ns)}${iv.start_known && iv.end_known ? '' : ' (cut by the recording edge)'}\n` +
      `blocked in ${iv.blocking}\nwoken by ${wakerText(iv)}`;
    r.dataset.id = String(iv.id);
    r.dataset.tid = String(iv.thread.tid);
    r.dataset.ns = String(iv.ns);
    r.dataset.state = iv.state;
    r.dataset.clipped = clipped ? '1' : '0';
    r.dataset.cause = iv.cause;
    r.dataset.waker = wakerText(iv);
    r.appendChild(svg('title', {})).textContent = text;
    r.addEventListener('mousemove', (e) => showTip(e as MouseEvent, text));
    r.addEventListener('mouseleave', hideTip);
    r.addEventListener('click', () => {
      detail.textContent = text + '\n\nstack (innermost first):\n  ' + iv.stack.map((f) => f.name).join('\n  ') +
        '\n\nwaker stack:\n  ' + (iv.waker_stack.map((f) => f.name).join('\n  ') || '(none)');
    });
    g.appendChild(r);
    if (iv.waker && laneOf.has(iv.waker.id)) links.push([iv, laneOf.get(iv.waker.id)!, laneOf.get(iv.thread.id)!]);
  }
  // Zones: a bar per zone at the top of its lane, coloured by site.
  const chosen = s.site === undefined ? undefined : Number(s.site);
  for (const z of zs.zones) {
    const g = groups.get(z.thread.id);
    if (!g) continue;
    const x = xOf(z.start_ns);
    const name = siteName.get(z.site) ?? String(z.site);
    const mark = chosen === undefined ? '' : chosen === z.site ? ' highlight' : ' faded';
    const r = svg('rect', { class: 'zone' + mark, x, y: Math.min(z.depth, 3) * 3.5, width: Math.max(0.6, xOf(z.end_ns) - x), height: 3,
      fill: `hsl(${(z.site * 67) % 360}, 65%, 45%)` });
    const text = `zone ${name} for ${fmtNs(z.ns)}`;
    r.dataset.site = name;
    r.dataset.ns = String(z.ns);
    r.dataset.tid = String(z.thread.tid);
    r.appendChild(svg('title', {})).textContent = text;
    r.addEventListener('mousemove', (e) => showTip(e as MouseEvent, text));
    r.addEventListener('mouseleave', hideTip);
    g.appendChild(r);
  }
  // Marks: a tick at the mark's time across the lane's top half.
  for (const m of zs.marks) {
    const g = groups.get(m.thread.id);
    if (!g) continue;
    const name = siteName.get(m.site) ?? String(m.site);
    const r = svg('rect', { class: 'mark', x: xOf(m.time_ns) - 0.4, y: 0, width: 0.8, height: 14,
      fill: `hsl(${(m.site * 67) % 360}, 65%, 35%)` });
    const text = `mark ${name} = ${m.value} at ${fmtNs(m.time_ns)}`;
    r.dataset.site = name;
    r.dataset.value = String(m.value);
    r.dataset.time = String(m.time_ns);
    r.dataset.tid = String(m.thread.tid);
    r.appendChild(svg('title', {})).textContent = text;
    r.addEventListener('mousemove', (e) => showTip(e as MouseEvent, text));
    r.addEventListener('mouseleave', hideTip);
    g.appendChild(r);
  }
  // Waker links: from the waker's lane to the woken thread's lane at the wakeup.
  const w = box.clientWidth - NAME_W;
  const overlay = svg('svg', { id: 'links', width: box.clientWidth, height: lanes.lanes.length * LANE_H });
  overlay.style.left = '0';
  overlay.style.top = '0';
  for (const [iv, from, to] of links) {
    const x = NAME_W + w * (iv.end_ns - lanes.start_ns) / span;
    const l = svg('line', { class: 'waker-link', x1: x, x2: x, y1: from * LANE_H + 14, y2: to * LANE_H + 22 });
    l.dataset.id = String(iv.id);
    overlay.appendChild(l);
  }
  box.appendChild(overlay);
  selection(box, s, info, lanes.start_ns, span, lanes.lanes.length * LANE_H);
  root.appendChild(detail);
}

// The time selection: drag across the lanes to select a zone of time; every
// view then answers for it (start/end of the queries, in the URL).  The
// selected zone is shaded; the selection chip above clears it.
function selection(box: HTMLElement, s: State, info: Info, start: number, span: number, height: number): void {
  const shade = document.createElement('div');
  shade.id = 'zone';
  shade.style.top = '0';
  shade.style.height = height + 'px';
  box.appendChild(shade);
  const width = () => box.clientWidth - NAME_W;
  const nsAt = (x: number) => Math.round(start + span * Math.min(1, Math.max(0, (x - NAME_W) / width())));
  const draw = (a: number, b: number) => {
    const x0 = NAME_W + width() * (Math.min(a, b) - start) / span;
    const x1 = NAME_W + width() * (Math.max(a, b) - start) / span;
    shade.style.left = x0 + 'px';
    shade.style.width = Math.max(1, x1 - x0) + 'px';
    shade.hidden = false;
  };
  shade.hidden = true;
  if (s.start || s.end) draw(Number(s.start || 0), s.end ? Number(s.end) : info.span_ns + 1);
  shade.dataset.start = s.start || '';
  shade.dataset.end = s.end || '';
  let from: number | undefined;
  const x = (e: MouseEvent) => e.clientX - box.getBoundingClientRect().left;
  box.addEventListener('mousedown', (e) => {
    if (x(e) < NAME_W || (e.target as Element).classList.contains('offcpu')) return;
    from = nsAt(x(e));
    e.preventDefault();
  });
  box.addEventListener('mousemove', (e) => { if (from !== undefined) draw(from, nsAt(x(e))); });
  box.addEventListener('mouseleave', () => { if (from !== undefined) { from = undefined; shade.hidden = !(s.start || s.end); } });
  box.addEventListener('mouseup', (e) => {
    if (from === undefined) return;
    const to = nsAt(x(e));
    const [a, b] = [Math.min(from, to), Math.max(from, to)];
    from = undefined;
    // A click (no drag) is not a selection.
    if (b - a < span / 500) return;
    writeState({ ...s, start: String(a), end: String(b), zoom: undefined });
  });
}
