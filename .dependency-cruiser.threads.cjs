// What an actor host thread loads: from workers/ and actor code (*/actor/), nothing reachable may be in the front
// door (src/http/), which is main-thread code (uWebSockets.js, HTTP errors). Only what survives the build counts
// (tsPreCompilationDeps: false), so `import type` across the wall is fine: types are erased.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'threads-never-reach-front-door',
      comment: 'Worker threads and actor code never load src/http/ (move the shared piece to a floor below it).',
      severity: 'error',
      from: { path: ['^workers/', '^src/[^/]+/actor/'] },
      to: { path: '^src/http/', reachable: true },
    },
    {
      name: 'runtime-never-reaches-face',
      comment: 'What src/runtime/ loads knows no face: no face code rides along into every host through the runtime.',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: ['^src/(ussd|oracle|gateway)/', '^src/cluster/'], reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^node_modules/'] },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
