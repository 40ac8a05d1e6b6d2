// Layer rules, checked by `npm run lint` (dependency-cruiser). The floors, bottom up:
//   src/base/                        the ground floor: errors, log, bounded map, env schema (import nothing above)
//   src/store/                       storage (knows no runtime, no face)
//   src/runtime/                     actors, hosts, rpc (knows no face and no cluster)
//   src/cluster/                     NATS-backed pieces of the runtime, and the faces' records on JetStream
//   src/ussd/ src/oracle/ src/gateway/  the faces (know no other face, nor the cluster: their storage is a port)
//   src/records/                     the faces' records on LMDB (beside src/cluster/records/: the other engine)
//   src/http/                        the front door (main thread only)
//   src/app/                         the composition root: the one place that knows every face
// Type-only imports count here: a layer that names another's types depends on it. What a worker thread *loads*
// is checked apart, by .dependency-cruiser.threads.cjs, where type-only imports (erased at build) do not count.
const FACES = '(ussd|oracle|gateway)';
/** The composition: the whole configuration, the actor kinds, the records' engine, the server. */
const ROOT = '^src/app/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'ground-floor-imports-nothing-above',
      comment: 'src/base/ is what every floor stands on: it imports nothing of src/ or workers/ outside itself.',
      severity: 'error',
      from: { path: '^src/base/' },
      to: { path: '^(src|workers)/', pathNot: '^src/base/' },
    },
    {
      name: 'runtime-knows-no-face',
      comment:
        'src/runtime/ hosts any actor kind: it may not know USSD, chat or the chain, nor the cluster, nor the whole ' +
        'configuration (it reads its own slice, runtime/config.ts).',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: [`^src/${FACES}/`, '^src/cluster/', '^src/records/', '^src/http/', ROOT] },
    },
    {
      name: 'store-knows-no-runtime-or-face',
      comment: 'src/store/ is storage: no runtime, no face, no front door.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: [`^src/${FACES}/`, '^src/runtime/', '^src/cluster/', '^src/records/', '^src/http/', ROOT] },
    },
    {
      name: 'no-face-imports-another',
      comment: 'Faces share through the floors below (errors, runtime, store, http), never through each other.',
      severity: 'error',
      from: { path: `^src/${FACES}/` },
      to: { path: `^src/${FACES}/`, pathNot: '^src/$1/' },
    },
    {
      name: 'faces-know-no-cluster',
      comment:
        'A face declares its record families (its port: ussd/repositories.ts, oracle/repositories.ts) and runs the ' +
        'same on either engine: fencing and staleness are the repositories\' (e.g. UssdSessionStore). JetStream ' +
        '(src/cluster/records/) or LMDB (src/records/lmdb/) is picked by the composition root (src/app/records.ts).',
      severity: 'error',
      from: { path: `^src/${FACES}/` },
      to: { path: '^src/cluster/' },
    },
    {
      name: 'faces-know-no-lmdb-records',
      comment:
        'Nor the LMDB engine: a face gets its repositories from the composition root (src/app/records.ts), never opens ' +
        'them itself.',
      severity: 'error',
      from: { path: `^src/${FACES}/` },
      to: { path: '^src/records/' },
    },
    {
      name: 'lmdb-records-know-no-cluster',
      comment:
        'src/records/ is the faces\' records on the node\'s LMDB: it implements the faces\' ports over src/store/, ' +
        'and knows neither the other engine (src/cluster/) nor the front door nor the composition root.',
      severity: 'error',
      from: { path: '^src/records/' },
      to: { path: ['^src/cluster/', '^src/http/', ROOT] },
    },
    {
      name: 'actor-code-not-in-front-door',
      comment: 'Actor code (*/actor/) and workers/ never import the front door, not even its types.',
      severity: 'error',
      from: { path: ['^workers/', '^src/[^/]+/actor/'] },
      to: { path: '^src/http/' },
    },
    {
      name: 'production-not-on-tools',
      comment: 'src/tools/ holds operator and development tools (launchers, simulators); the server never loads them.',
      severity: 'error',
      from: { path: '^(src|workers)/', pathNot: '^src/tools/' },
      to: { path: '^src/tools/' },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes load order matter and hides which module is the lower floor.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^node_modules/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
