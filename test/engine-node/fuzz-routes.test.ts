// ../fuzz-routes.test.ts on the portable engine (HTTP_ENGINE=node): every answer, node:http's parser's own
// refusals included, is the contract's JSON error body, never a 5xx.
process.env.TEST_HTTP_ENGINE = 'node';
await import('../fuzz-routes.test.js');
