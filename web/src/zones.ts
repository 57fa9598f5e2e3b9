// Zone statistics: one row per site the program marked with the probes SDK
// (/api/zones), over the selected time and threads (the server clips zones
// to the selection).  Columns sort on a click (sort= in the URL); a click
// on a site opens the timeline with that site's blocks highlighted.
import { ZoneSite, Zones, fmtInt, fmtNs, get } from './api';
import { State, writeState } from './state';

const COLUMNS: [keyof ZoneSite, string][] = [
  ['count', 'count'], ['total_ns', 'total'], ['min_ns', 'min'], ['mean_ns', 'mean'],
  ['median_ns', 'median'], ['p99_ns', 'p99'], ['max_ns', 'max'],
];

export async function renderZones(root: HTMLElement, s: State): Promise<void> {
  const z = await get<Zones>('zones', { thread: s.thread, label: s.label, start: s.start, end: s.end, limit: 1 });
  root.innerHTML = '';
  const shown = z.sites.filter((st) => st.count || st.marks || st.unmatched_begins || st.unmatched_ends);
  const sort = (COLUMNS.find(([k]) => k === s.sort) || ['total_ns'])[0];
  shown.sort((a, b) => (b[sort] as number) - (a[sort] as number) || a.name.localeCompare(b.name));
  const head = document.createElement('div');
  head.id = 'zones-head';
  head.textContent = `${shown.length} zone sites` + (s.start || s.end ? ', zones clipped to the selection' + (z.clipped ? ` (${z.clipped} cut at an edge)` : '') : '') +
    `; unmatched begins ${z.unmatched_begins}, ends ${z.unmatched_ends}`;
  root.appendChild(head);
  const t = document.createElement('table');
  t.id = 'zones';
  const h = document.createElement('tr');
  const th = (text: string, key?: string) => {
    const e = document.createElement('th');
    e.textContent = text + (key === sort ? ' ▼' : '');
    if (key) {
      e.dataset.sort = key;
      e.addEventListener('click', () => writeState({ ...s, sort: key }));
    }
    if (text === 'site') e.className = 'name';
    h.appendChild(e);
  };
  th('site');
  th('pid');
  for (const [k, label] of COLUMNS) th(label, k);
  th('unmatched');
  th('marks', 'marks');
  t.appendChild(h);
  for (const st of shown) {
    const tr = document.createElement('tr');
    tr.dataset.site = st.name;
    tr.dataset.id = String(st.id);
    const td = (text: string, key?: string, v?: number) => {
      const e = document.createElement('td');
      e.textContent = text;
      if (key) e.dataset.key = key;
      if (v !== undefined) e.dataset.value = String(v);
      tr.appendChild(e);
      return e;
    };
    td(st.name).className = 'name';
    td(String(st.pid));
    for (const [k] of COLUMNS) td(k === 'count' ? fmtInt(st.count) : (st.count ? fmtNs(st[k] as number) : '–'), k, st[k] as number);
    td(String(st.unmatched_begins + st.unmatched_ends), 'unmatched', st.unmatched_begins + st.unmatched_ends);
    td(fmtInt(st.marks), 'marks', st.marks);
    tr.style.cursor = 'pointer';
    tr.title = `show the zones of ${st.name} on the timeline`;
    tr.addEventListener('click', () => writeState({ ...s, view: 'timeline', site: String(st.id), sort: undefined }));
    t.appendChild(tr);
  }
  root.appendChild(t);
}
