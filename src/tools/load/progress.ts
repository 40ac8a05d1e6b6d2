// Thread: main
// One line a second while a run goes (on a terminal, or with --progress): rate, p50/p99 of that second, errors.
import type { SeriesPoint } from './recorder.js';

export function progressLine(point: SeriesPoint, label: string): string {
  return (
    `${label} ${String(point.t).padStart(4)}s  ${String(point.rps).padStart(6)} req/s  p50 ${point.p50.toFixed(1).padStart(7)} ms  ` +
    `p99 ${point.p99.toFixed(1).padStart(8)} ms  errors ${String(point.errors).padStart(4)}  in flight ${point.inFlight}`
  );
}
