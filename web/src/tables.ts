// Tables: functions (self/total, sorted by the server), call tree pages,
// off-CPU groups, diff and summary.
import { CallTree, Diff, Flat, Groups, Info, Offcpu, Source, fmtNs, fmtWeight, get, pct } from './api';
import { State, filters, writeState } from './state';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function row(cells: (string | HTMLElement)[], nameCol = 0): HTMLTableRowElement {
  const tr = el('tr');
  cells.forEach((c, i) => {
    const td = el('td', undefined, i === nameCol ? 'name' : undefined);
    if (typeof c === 'string') td.textContent = c; else td.appendChild(c);
    tr.appendChild(td);
  });
  return tr;
}

export async function renderTable(root: HTMLElement, s: State): Promise<void> {
  const sort = s.sort === 'total' ? 'total' : 'self';
  const f = await get<Flat>('flat', { ...filters(s), sort, limit: 500 });
  root.innerHTML = '';
  const what = s.gran === 'module' ? 'modules' : 'functions';
  root.appendChild(el('div', `${f.nrows} ${what}, ${f.event}: ${fmtWeight(f.total, f.unit)}`));
  const t = el('table');
  t.id = 'functions';
  const h = el('tr');
  h.appendChild(el('th', 'function', 'name'));
  for (const col of ['self', 'total']) {
    const th = el('th', col + (col === sort ? ' ▼' : ''));
    th.dataset.sort = col;
    th.addEventListener('click', () => writeState({ ...s, sort: col }));
    h.appendChild(th);
    h.appendChild(el('th', col + ' %'));
  }
  t.appendChild(h);
  for (const r of f.rows) {
    const tr = row([r.name + (r.kind === 'kernel' ? ' [k]' : ''), String(r.self), pct(r.self, f.total), String(r.total), pct(r.total, f.total)]);
    tr.dataset.name = r.name;
    // A module has no source lines: only function rows open the source view.
    // The row's identity, not its label: a Python row reads "f (app.py)",
    // a C++ one demangled, a line row "f (f.c:12)"; /api/source wants f.
    if ((r.kind === 'function' || r.kind === 'inline') && s.gran !== 'module' && r.function) {
      tr.style.cursor = 'pointer';
      tr.title = 'source view of ' + r.name;
      tr.addEventListener('click', () => writeState({ ...s, view: 'source', fn: r.function, fnfile: r.file }));
    }
    t.appendChild(tr);
  }
  root.appendChild(t);
}

// The source view of one function: per-line self/total from the capture's
// line tables, beside the text when the server can read the file.
export async function renderSource(root: HTMLElement, s: State): Promise<void> {
  root.innerHTML = '';
  if (!s.fn) {
    root.appendChild(el('p', 'Pick a function in the Functions table to see its lines.'));
    return;
  }
  const f = filters(s);
  const r = await get<Source>('source', { ...f, granularity: undefined, function: s.fn, file: s.fnfile });
  const who = r.file !== undefined ? `${r.function} (${r.file})` : r.function;
  root.appendChild(el('div', `${who}: ${fmtWeight(r.function_total, r.unit)} of ${fmtWeight(r.total, r.unit)} (${pct(r.function_total, r.total)}) in ${r.files.length} file(s)`));
  for (const file of r.files) {
    root.appendChild(el('h4', file.file || '(no file recorded)'));
    const cost = new Map(file.lines.map((l) => [l.line, l]));
    const t = el('table');
    t.className = 'source';
    const h = el('tr');
    for (const c of ['line', 'self', 'total', 'total %', 'source']) h.appendChild(el('th', c, c === 'source' ? 'name' : undefined));
    t.appendChild(h);
    const max = Math.max(1, ...file.lines.map((l) => l.total));
    const add = (n: number, text: string | undefined) => {
      const c = cost.get(n);
      const tr = row([String(n || '?'), c ? String(c.self) : '', c ? String(c.total) : '', c ? pct(c.total, r.total) : '', el('pre', text ?? '')], 4);
      tr.dataset.line = String(n);
      if (c) {
        tr.dataset.self = String(c.self);
        tr.dataset.total = String(c.total);
        tr.classList.add('hot');
        tr.style.setProperty('--heat', String(c.total / max));
      }
      t.appendChild(tr);
    };
    if (file.readable && file.text) {
      file.text.forEach((text, i) => add(file.first_line! + i, text));
    } else {
      for (const l of file.lines) add(l.line, undefined);
    }
    root.appendChild(t);
    if (!file.readable) root.appendChild(el('p', file.why ?? "source not served", 'note'));
  }
}

export async function renderTree(root: HTMLElement, s: State): Promise<void> {
  root.innerHTML = '';
  const t = el('table');
  t.id = 'calltree';
  const h = el('tr');
  for (const c of ['function', 'total', 'total %', 'self']) h.appendChild(el('th', c, c === 'function' ? 'name' : undefined));
  t.appendChild(h);
  root.appendChild(t);
  const base = { ...filters(s), threads: true };
  const expand = async (node: number, after: HTMLTableRowElement | null, depth: number) => {
    const r = await get<CallTree>('calltree', { ...base, node, limit: 200 });
    let prev = after;
    for (const c of r.children) {
      const name = el('span', (c.nchildren ? '▸ ' : '  ') + c.name + (c.kind === 'kernel' ? ' [k]' : ''));
      name.style.paddingLeft = depth * 14 + 'px';
      const tr = row([name, String(c.total), pct(c.total, r.total), String(c.self)]);
      tr.dataset.name = c.name;
      let open = false;
      const rows: HTMLTableRowElement[] = [];
      if (c.nchildren) {
        tr.style.cursor = 'pointer';
        tr.addEventListener('click', async () => {
          if (open) {
            for (const x of rows.splice(0)) x.remove();
            name.textContent = '▸ ' + c.name;
          } else {
            const before = t.rows.length;
            await expand(c.id, tr, depth + 1);
            // rows added right after tr belong to it (closing removes them)
            let n = t.rows.length - before;
            for (let x = tr.nextElementSibling; n > 0 && x; x = x.nextElementSibling, n--) rows.push(x as HTMLTableRowElement);
            name.textContent = '▾ ' + c.name;
          }
          open = !open;
        });
      }
      if (prev) prev.after(tr); else t.appendChild(tr);
      prev = tr;
    }
  };
  await expand(0, null, 0);
}

export async function renderOffcpu(root: HTMLElement, s: State): Promise<void> {
  const by = s.by === 'function' || s.by === 'waker' ? s.by : 'state';
  const f = filters(s);
  const r = await get<Offcpu>('offcpu', { ...f, event: undefined, by });
  root.innerHTML = '';
  const pick = el('div');
  for (const b of ['state', 'function', 'waker']) {
    const a = el('a', b);
    a.href = '#';
    a.style.marginRight = '1em';
    if (b === by) a.style.fontWeight = 'bold';
    a.addEventListener('click', (e) => { e.preventDefault(); writeState({ ...s, by: b }); });
    pick.appendChild(a);
  }
  root.appendChild(pick);
  root.appendChild(el('div', `${r.count} off-CPU intervals, ${fmtNs(r.total)} by ${r.by}`));
  const t = el('table');
  t.id = 'offcpu';
  const h = el('tr');
  for (const c of [r.by, 'kind', 'intervals', 'time', 'share']) h.appendChild(el('th', c));
  t.appendChild(h);
  for (const x of r.rows) t.appendChild(row([x.name, x.kind, String(x.count), fmtNs(x.ns), pct(x.ns, r.total)]));
  root.appendChild(t);
}

// The base's part: a bar over the base's span (drag across it to choose a
// part) and two inputs in ms from the base's origin; both land in the URL
// as base_start/base_end (ns), which /api/diff takes as they are.
function baseRange(s: State, span: number): HTMLElement {
  const box = el('div', undefined, 'base-range');
  box.id = 'base-range';
  const lo = s.base_start ? Number(s.base_start) : 0;
  const hi = s.base_end ? Number(s.base_end) : span;
  const set = (a?: number, b?: number) => {
    // Whole microseconds (a drag's ends are a pixel's worth of time anyway).
    const ns = (v?: number) => (v === undefined || !isFinite(v) ? undefined : String(Math.max(0, Math.round(v / 1e3) * 1e3)));
    writeState({ ...s, base_start: a ? ns(a) : undefined, base_end: b !== undefined && b < span ? ns(b) : undefined });
  };
  box.appendChild(el('span', 'base part (ms from its start):'));
  const input = (id: string, v: number, dflt: number) => {
    const i = el('input');
    i.id = id;
    i.type = 'number';
    i.min = '0';
    i.step = 'any';
    i.size = 10;
    i.placeholder = (dflt / 1e6).toFixed(3);
    if (v !== dflt) i.value = String(v / 1e6);
    return i;
  };
  const from = input('base-start', lo, 0);
  const to = input('base-end', hi, span);
  const apply = () => {
    const a = from.value === '' ? undefined : Number(from.value) * 1e6;
    const b = to.value === '' ? undefined : Number(to.value) * 1e6;
    // An empty part is refused here (the API would answer 400 and the
    // view lose these inputs): said on the input instead.
    to.setCustomValidity(a !== undefined && b !== undefined && b <= a ? 'the end must be after the start' : '');
    if (!to.reportValidity()) return;
    set(a, b);
  };
  from.addEventListener('change', apply);
  to.addEventListener('change', apply);
  box.append(from, el('span', '–'), to);
  const whole = el('button', 'whole base');
  whole.type = 'button';
  whole.id = 'base-whole';
  whole.disabled = !s.base_start && !s.base_end;
  whole.addEventListener('click', () => set(undefined, undefined));
  box.appendChild(whole);
  // The bar: the base's whole span, its chosen part shaded.
  const bar = el('div', undefined, 'base-bar');
  bar.id = 'base-bar';
  bar.title = `the base's ${fmtNs(span)}: drag to choose a part`;
  const part = el('div', undefined, 'base-part');
  part.style.left = (span ? 100 * lo / span : 0) + '%';
  part.style.width = (span ? 100 * (Math.min(hi, span) - lo) / span : 100) + '%';
  bar.appendChild(part);
  let x0: number | null = null;
  const at = (e: MouseEvent) => {
    const r = bar.getBoundingClientRect();
    return Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)) * span;
  };
  bar.addEventListener('mousedown', (e) => { x0 = at(e); e.preventDefault(); });
  bar.addEventListener('mousemove', (e) => {
    if (x0 === null) return;
    const x = at(e);
    part.style.left = 100 * Math.min(x0, x) / span + '%';
    part.style.width = 100 * Math.abs(x - x0) / span + '%';
  });
  bar.addEventListener('mouseup', (e) => {
    if (x0 === null) return;
    const x = at(e);
    const [a, b] = [Math.min(x0, x), Math.max(x0, x)];
    x0 = null;
    if (b - a > span / 1000) set(a, b);
  });
  box.appendChild(bar);
  return box;
}

export async function renderDiff(root: HTMLElement, s: State, info: Info): Promise<void> {
  const f = filters(s);
  // Row ids are this capture's: the base answers the rest of the query.  The
  // time selection narrows this capture; base_start/base_end the base.
  const d = await get<Diff>('diff', { ...f, thread: undefined, base_start: s.base_start, base_end: s.base_end, limit: 300 });
  const zone = s.start || s.end ? ' in the time selection' : '';
  const span = info.diff_span_ns || 0;
  const part = s.base_start || s.base_end
    ? ` from ${fmtNs(Number(s.base_start || 0))} to ${s.base_end ? fmtNs(Number(s.base_end)) : 'its end'}` : ' whole';
  root.innerHTML = '';
  root.appendChild(baseRange(s, span));
  const head = el('div', `this capture${zone} (${fmtWeight(d.total, d.unit)}) against ${d.base}${part} (${fmtWeight(d.base_total, d.unit)}); most changed self share first`);
  head.id = 'diff-head';
  head.dataset.total = String(d.total);
  head.dataset.baseTotal = String(d.base_total);
  root.appendChild(head);
  // A side that selects none of its samples (a base part past its end):
  // every share there is 0, so say so, as report --diff warns.
  for (const n of [d.base_note, d.note]) {
    if (!n) continue;
    const w = el('div', n, 'diff-note');
    w.style.color = '#a40';
    root.appendChild(w);
  }
  // z: the two-proportion z of the self shares (as report --diff's); '*'
  // marks |z| >= 3.29 (p < 0.001), only when the unit counts samples.
  const counted = d.unit === 'samples';
  const legend = el('div', counted
    ? 'z: two-proportion z test of the self shares; * significant, |z| ≥ 3.29 (p < 0.001)'
    : 'z: none, the unit is not a count of samples');
  legend.id = 'diff-legend';
  root.appendChild(legend);
  const t = el('table');
  t.id = 'diff';
  const h = el('tr');
  for (const c of ['function', 'self Δ (pp)', 'z', 'self % base', 'self % now', 'total Δ (pp)']) h.appendChild(el('th', c, c === 'function' ? 'name' : undefined));
  t.appendChild(h);
  for (const r of d.rows) {
    const z = el('span', counted ? r.z.toFixed(1) + (r.significant ? '*' : '') : '');
    z.className = 'z';
    if (r.significant) z.title = 'significant: |z| ≥ 3.29 (p < 0.001)';
    const tr = row([r.name + (r.kind === 'kernel' ? ' [k]' : ''), (r.self_delta > 0 ? '+' : '') + r.self_delta.toFixed(2), z,
      pct(r.base_self, d.base_total), pct(r.self, d.total), (r.total_delta > 0 ? '+' : '') + r.total_delta.toFixed(2)]);
    tr.className = r.self_delta > 0 ? 'up' : r.self_delta < 0 ? 'down' : '';
    tr.dataset.name = r.name;
    tr.dataset.delta = r.self_delta.toFixed(2);
    tr.dataset.z = r.z.toFixed(2);
    tr.dataset.significant = String(r.significant);
    t.appendChild(tr);
  }
  root.appendChild(t);
}

export function renderSummary(root: HTMLElement, info: Info): void {
  root.innerHTML = '';
  const dl = el('dl', undefined, 'summary');
  const add = (k: string, v: string) => { dl.appendChild(el('dt', k)); dl.appendChild(el('dd', v)); };
  const sm = info.summary;
  add('capture', info.name);
  add('samples', `${sm.samples} (${sm.threads} threads, ${sm.rate_hz.toFixed(1)} Hz per thread)`);
  add('duration', fmtNs(sm.duration_ns));
  add('events', info.events.map((e) => `${e.name} (${e.unit})`).join(', '));
  add('off-CPU intervals', String(info.counts.intervals));
  add('empty stacks', String(sm.empty_stacks));
  add('truncated stacks', `${sm.truncated}` + sm.truncation_reasons.map((c) => `\n  ${c.name}: ${c.value}`).join(''));
  add('lost', `${sm.lost}` + sm.lost_counters.map((c) => `\n  ${c.name}: ${c.value}`).join(''));
  add('problems', `${sm.problems}` + sm.problem_counters.map((c) => `\n  ${c.name}: ${c.value}`).join(''));
  for (const [k, v] of Object.entries(info.meta)) add('meta ' + k, v);
  dl.querySelectorAll('dd').forEach((d) => ((d as HTMLElement).style.whiteSpace = 'pre-wrap'));
  root.appendChild(dl);
}

// Weight per process, thread, container or module (labels as pprof's
// -tagfocus sees them), of the samples the filters keep: the time selection,
// focus/ignore, thread, module and labels, as the other views count them.
export async function renderGroups(root: HTMLElement, s: State): Promise<void> {
  const by = ['thread', 'container', 'module'].includes(s.group || '') ? s.group! : 'process';
  const r = await get<Groups>('groups', { ...filters(s), by, limit: 500 });
  root.innerHTML = '';
  const pick = el('div');
  for (const b of ['process', 'thread', 'container', 'module']) {
    const a = el('a', b);
    a.href = '#';
    a.style.marginRight = '1em';
    if (b === by) a.style.fontWeight = 'bold';
    a.addEventListener('click', (e) => { e.preventDefault(); writeState({ ...s, group: b }); });
    pick.appendChild(a);
  }
  root.appendChild(pick);
  root.appendChild(el('div', `${r.nrows} ${r.by} groups, ${r.event}: ${fmtWeight(r.total, r.unit)}`));
  const t = el('table');
  t.id = 'groups';
  const h = el('tr');
  for (const c of [r.by, 'weight', 'share', 'samples']) h.appendChild(el('th', c, c === r.by ? 'name' : undefined));
  t.appendChild(h);
  for (const x of r.rows) {
    const tr = row([x.name, fmtWeight(x.weight, r.unit), pct(x.weight, r.total), String(x.samples)]);
    tr.dataset.name = x.name;
    t.appendChild(tr);
  }
  root.appendChild(t);
}
