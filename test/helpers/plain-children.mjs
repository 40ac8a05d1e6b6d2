// Loaded into every test process by the tap config's node-arg (plain JavaScript: the actor hosts' worker threads
// inherit the flag, and load it before any TypeScript loader of theirs is ready): the processes a test spawns run
// without tap's process-info loader. tap puts @tapjs/processinfo (coverage and process tracking) into each child's
// NODE_OPTIONS through a process-on-spawn listener, whatever env the test gives it. Coverage is off in this project,
// and the loader's hooks thread sees every module a child loads: a server's start took twice the CPU with it
// (4.2-5.7 against 2.1-3.0 CPU-s, measured). This listener runs after tap's and takes it out again.
import { createRequire } from 'node:module';

const onSpawn = createRequire(import.meta.url)('process-on-spawn');

/** NODE_OPTIONS without the process-info loader (`--import=` or `--loader=`, quoted or not). */
function withoutProcessInfo(options) {
  return (options ?? '')
    .replace(/"?--(?:import|loader)=\S*@tapjs\/processinfo\S*?"?(?=\s|$)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

onSpawn.addListener((spawned) => {
  const env = { ...spawned.env, NODE_OPTIONS: withoutProcessInfo(spawned.env.NODE_OPTIONS) };
  if (env.NODE_OPTIONS === '') delete env.NODE_OPTIONS;
  for (const name of Object.keys(env)) if (name.startsWith('_TAPJS_PROCESSINFO_')) delete env[name];
  spawned.env = env;
});
