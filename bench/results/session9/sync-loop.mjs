// node sync-loop.mjs none|one|both : CPU of a 4 KiB write plus fdatasync (one), plus an O_DSYNC write of another page
// (both: LMDB's data sync and meta write), per iteration, on this machine's disk.
import { openSync, writeSync, fdatasyncSync, constants } from 'node:fs';
const mode = process.argv[2];
const fd = openSync('/tmp/sync-loop.bin', 'w+');
const fd2 = openSync('/tmp/sync-loop.bin', constants.O_RDWR | constants.O_DSYNC);
const buf = Buffer.alloc(4096, 1);
const N = 2000;
for (let i = 0; i < 100; i++) { writeSync(fd, buf, 0, 4096, (i % 64) * 4096); fdatasyncSync(fd); }
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < N; i++) {
  writeSync(fd, buf, 0, 4096, 8192 + (i % 64) * 4096);
  if (mode !== 'none') fdatasyncSync(fd);
  if (mode === 'both') writeSync(fd2, buf, 0, 4096, 0);
}
const c = process.cpuUsage(c0); const t = performance.now() - t0;
console.log(mode, 'wall', (t / N * 1000).toFixed(0), 'us user', (c.user / N).toFixed(0), 'sys', (c.system / N).toFixed(0));
