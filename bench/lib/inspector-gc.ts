// A full garbage collection on a benchmark target's main thread through its inspector
// (node --inspect=127.0.0.1:0), so a memory reading counts what is live and what V8 keeps mapped, not garbage
// that merely has not been collected yet: an idle V8 seldom collects, so without this a reading taken before a
// burst of connections could hold more garbage than one taken after it. `HeapProfiler.collectGarbage` is V8's
// low-memory notification (full, compacting GCs). Only the main thread: asking the worker threads' isolates the
// same through NodeWorker sessions made the server exit (node 20.20), and the sockets live on the main thread.
import WebSocket from 'ws';

/** The inspector's WebSocket address in what node printed on stderr, once it is there. */
export const inspectorUrlIn = (stderr: string) => /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];

export async function collectGarbage(url: string, timeoutMs = 60_000): Promise<void> {
  const socket = new WebSocket(url);
  const timer = setTimeout(() => socket.terminate(), timeoutMs);
  try {
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (raw) => {
        if ((JSON.parse(raw.toString()) as { id?: number }).id === 1) resolve();
      });
      socket.once('close', () => reject(new Error('the inspector closed before the GC finished')));
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    clearTimeout(timer);
    socket.close();
  }
}
