// Thread: main
// GET /messages' answer written as it is read, one part of the transcript at a time (the session's
// actor cuts the parts, session-state.ts messagesPart), each written in slices that wait for the socket to take
// them. However long the transcript and however many read it at once, each read holds about one part and one
// slice, never the whole answer, and a reader that stops reading is cut off by the stream's own bounds
// (SSE_MAX_BUFFER_BYTES, SSE_STALL_TIMEOUT_SECONDS).
// The bytes are those of JSON.stringify({ messages }): `{"messages":[` then the items comma-separated, then `]}`.
import type { Logger } from '../../base/log.js';
import type { StreamWriter } from '../../http/types.js';
import type { MessagesPart } from '../sessions/transcript.js';

/**
 * Characters per write; at most SLICE_BYTES bytes in UTF-8 (a write the socket does not take counts whole against
 * the stream's buffer bound, whose least setting is 16 KiB).
 */
const SLICE_CHARS = 16 * 1024;
const SLICE_BYTES = 16 * 1024;

class ReaderGone extends Error {}

/**
 * Writes the list from its first part (read before the answer started, so a refusal was still a JSON error) and
 * ends the stream. A part that cannot be read once the answer started (the actor's host restarting) ends it
 * early: the client gets an incomplete JSON text, which it cannot mistake for a transcript.
 */
export async function streamMessageList(
  writer: StreamWriter,
  first: MessagesPart,
  nextPart: (from: number) => Promise<MessagesPart>,
  log: Logger,
  requestId: string,
): Promise<void> {
  let wake: (() => void) | undefined;
  writer.onClose(() => wake?.());
  const send = async (text: string) => {
    for (let at = 0; at < text.length; ) {
      const slice = sliceAt(text, at);
      at += slice.length;
      if (writer.closed) throw new ReaderGone();
      if (writer.write(slice)) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        writer.onDrain(resolve);
      });
    }
    if (writer.closed) throw new ReaderGone();
  };
  try {
    await send('{"messages":[');
    for (let part = first, written = 0; ; ) {
      if (part.count > 0) {
        if (written > 0) await send(',');
        await send(part.json);
        written += part.count;
      }
      if (part.next === undefined) break;
      part = await nextPart(part.next);
    }
    await send(']}');
  } catch (error) {
    if (!(error instanceof ReaderGone))
      log.warn({ err: error, reqId: requestId }, 'message list ended early: a part could not be read');
  } finally {
    writer.end();
  }
}

/** The slice of `text` from `at`: at most SLICE_BYTES in UTF-8, never splitting a surrogate pair. */
function sliceAt(text: string, at: number): string {
  let end = Math.min(text.length, at + SLICE_CHARS);
  // Three bytes per UTF-16 unit at most: a slice over the bound is cut to a size that cannot be.
  if (Buffer.byteLength(text.slice(at, end)) > SLICE_BYTES) end = Math.min(text.length, at + SLICE_BYTES / 4);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(at, end);
}
