// Frame codec of the gateway's own HTTP/2 client (src/gateway/h2/frames.ts): frames cut anywhere across socket
// chunks come out whole and in order; header blocks split into HEADERS + CONTINUATION; oversized frames refused.
import t from 'tap';
import fc from 'fast-check';
import { Flag, FrameReader, FrameType, frame, headerFrames, requestFrames } from '../dist/src/gateway/h2/frames.js';

type Seen = [type: number, flags: number, streamId: number, payload: string];

function read(chunks: Buffer[], maxFrameSize = 16_384): Seen[] {
  const seen: Seen[] = [];
  const reader = new FrameReader(maxFrameSize, (type, flags, streamId, payload) =>
    seen.push([type, flags, streamId, payload.toString('hex')]),
  );
  for (const chunk of chunks) reader.push(chunk);
  return seen;
}

t.test('frames split at any points across chunks are read whole, in order', async (t) => {
  const frameArb = fc.record({
    type: fc.integer({ min: 0, max: 9 }),
    flags: fc.integer({ min: 0, max: 255 }),
    id: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    payload: fc.uint8Array({ maxLength: 40 }),
  });
  fc.assert(
    fc.property(
      fc.array(frameArb, { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 10 }),
      (frames, cuts) => {
        const wire = Buffer.concat(frames.map((f) => frame(f.type, f.flags, f.id, f.payload)));
        const points = [...new Set(cuts.map((cut) => cut % (wire.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, i, all) => wire.subarray(from, all[i + 1] ?? wire.length));
        t.same(
          read(chunks),
          frames.map((f) => [f.type, f.flags, f.id, Buffer.from(f.payload).toString('hex')]),
        );
        return true;
      },
    ),
    { numRuns: 300 },
  );
});

t.test('a header block larger than the frame size: HEADERS then CONTINUATIONs, END_HEADERS on the last', async (t) => {
  const block = Buffer.alloc(40_000, 0x82);
  const frames = read([headerFrames(5, [block.subarray(0, 100), block.subarray(100)], true, 16_384)]);
  t.same(
    frames.map(([type, flags, id, payload]) => [type, flags, id, payload.length / 2]),
    [
      [FrameType.HEADERS, Flag.END_STREAM, 5, 16_384],
      [FrameType.CONTINUATION, 0, 5, 16_384],
      [FrameType.CONTINUATION, Flag.END_HEADERS, 5, 40_000 - 2 * 16_384],
    ],
  );
});

t.test('a unary request in one buffer: HEADERS, then DATA (END_STREAM) with the 5-byte prefix', async (t) => {
  t.same(read([requestFrames(3, [Buffer.from([0x83]), Buffer.from([0x86])], Buffer.from('hi'), 16_384)]), [
    [FrameType.HEADERS, Flag.END_HEADERS, 3, '8386'],
    [FrameType.DATA, Flag.END_STREAM, 3, '00000000026869'],
  ]);
});

t.test('a frame longer than the maximum frame size is a FRAME_SIZE_ERROR', async (t) => {
  t.throws(() => read([frame(FrameType.DATA, 0, 1, Buffer.alloc(100))], 99), { code: 6, message: /exceeds 99/ });
  t.throws(() => read([frame(FrameType.DATA, 0, 1, Buffer.alloc(100)).subarray(0, 9)], 99), { code: 6 });
});
