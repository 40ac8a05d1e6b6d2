// Thread: main
// uWS wants the whole status line ("404 Not Found"); built once from node's reason phrases.
import { STATUS_CODES } from 'node:http';

const STATUS_LINES = new Map(Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), `${code} ${text}`]));

export function statusLine(status: number): string {
  return STATUS_LINES.get(status) ?? `${status} Unknown`;
}
