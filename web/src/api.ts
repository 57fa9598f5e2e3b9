// Typed queries to /api/ (docs/api.md).  The page never aggregates rows: every
// number it shows comes from one of these answers.

export interface Thread { id: number; tid: number; comm: string; process: number; pid: number; process_comm: string; }
export interface Event { id: number; name: string; unit: string; period: number; offcpu: boolean; }
export interface Count { name: string; value: number; }
export interface Info {
  name: string; origin_ns: number; span_ns: number; event: number; events: Event[];
  meta: Record<string, string>; diff: string | null; diff_span_ns: number | null;
  segments: number; live: boolean; version: string;
  counts: Record<string, number>;
  summary: {
    samples: number; weight: number; duration_ns: number; threads: number; rate_hz: number;
    empty_stacks: number; truncated: number; lost: number; lost_counters: Count[];
    problems: number; problem_counters: Count[]; truncation_reasons: Count[];
  };
}
export interface FlameNode { id: number; parent: number; name: string; kind: string; self: number; total: number; }
export interface Flame { event: string; unit: string; total: number; samples: number; min_share: number; pruned: number; nodes: FlameNode[]; }
export interface TreeChild { id: number; name: string; kind: string; self: number; total: number; nchildren: number; }
export interface CallTree { event: string; unit: string; total: number; node: TreeChild; nchildren: number; offset: number; children: TreeChild[]; }
// function/file: the row's function identity (what /api/source takes), apart
// from its display name; absent for modules, threads and unnamed code.
export interface FlatRow { name: string; kind: string; self: number; total: number; function?: string; file?: string; }
export interface Flat { event: string; unit: string; total: number; nrows: number; offset: number; sort: string; rows: FlatRow[]; }
export interface Lane { thread: Thread; samples: number[]; off_cpu_ns: number[]; }
export interface Lanes { start_ns: number; bucket_ns: number; nbuckets: number; nlanes: number; offset: number; lanes: Lane[]; }
export interface Frame { name: string; kind: string; }
export interface Interval {
  id: number; thread: Thread; start_ns: number; end_ns: number; ns: number; state: string; cause: string;
  start_known: boolean; end_known: boolean; waker: Thread | null; blocking: string; stack: Frame[]; waker_stack: Frame[];
}
export interface Intervals { total: number; offset: number; intervals: Interval[]; }
export interface ZoneSite {
  id: number; name: string; pid: number; count: number; total_ns: number; min_ns: number; mean_ns: number;
  median_ns: number; p99_ns: number; max_ns: number; unmatched_begins: number; unmatched_ends: number; marks: number;
}
export interface Zone { site: number; thread: Thread; start_ns: number; end_ns: number; ns: number; depth: number; }
export interface Mark { site: number; thread: Thread; time_ns: number; value: number; }
export interface Zones {
  total: number; offset: number; unmatched_begins: number; unmatched_ends: number; clipped: number;
  sites: ZoneSite[]; zones: Zone[]; marks: Mark[]; marks_total: number;
}
export interface OffcpuRow { kind: string; name: string; count: number; ns: number; }
export interface Offcpu { event: string; unit: string; total: number; by: string; count: number; nrows: number; offset: number; rows: OffcpuRow[]; }
export interface DiffRow { name: string; kind: string; base_self: number; base_total: number; self: number; total: number; self_delta: number; total_delta: number; z: number; significant: boolean; }
export interface Diff { event: string; unit: string; total: number; base: string; base_total: number; nrows: number; offset: number; rows: DiffRow[]; base_note?: string; note?: string; }

export interface GroupRow { name: string; weight: number; samples: number; }
export interface Groups { event: string; unit: string; total: number; by: string; nrows: number; offset: number; rows: GroupRow[]; }

export interface SourceLine { line: number; self: number; total: number; }
export interface SourceFile { file: string; lines: SourceLine[]; readable: boolean; why?: string; first_line?: number; text?: string[]; }
export interface Source { event: string; unit: string; total: number; function: string; file?: string; function_total: number; files: SourceFile[]; }

export type Params = Record<string, string | number | boolean | undefined>;

export class ApiError extends Error {}

function url(endpoint: string, params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') continue;
    q.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  const s = q.toString();
  return '/api/' + endpoint + (s ? '?' + s : '');
}

async function fetchJson<T>(u: string): Promise<T> {
  const r = await fetch(u);
  const body = await r.json();
  if (!r.ok) throw new ApiError(body.error || r.statusText);
  return body as T;
}

export async function get<T>(endpoint: string, params: Params = {}): Promise<T> {
  return fetchJson<T>(url(endpoint, params));
}

export function pct(part: number, whole: number): string {
  return whole ? (100 * part / whole).toFixed(2) + '%' : '0%';
}

// Thousands separated by commas, without Intl: toLocaleString builds a
// formatter per call (milliseconds per thousand flame graph frames), and
// the first Intl.NumberFormat of a fresh page loads ICU's locale data
// before the first frame.
export function fmtInt(v: number): string {
  const s = String(Math.abs(Math.round(v)));
  let out = '';
  for (let i = s.length; i > 0; i -= 3) out = s.slice(Math.max(0, i - 3), i) + (out ? ',' + out : '');
  return (v < 0 ? '-' : '') + out;
}

export function fmtWeight(v: number, unit: string): string {
  if (unit === 'nanoseconds') return fmtNs(v);
  return fmtInt(v) + (unit === 'samples' ? ' samples' : ' ' + unit);
}

export function fmtNs(ns: number): string {
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + ' us';
  return ns + ' ns';
}
