// ../http-slow-clients.test.ts on the portable engine (HTTP_ENGINE=node): the front-door contract is the same on both engines.
process.env.TEST_HTTP_ENGINE = 'node';
await import('../http-slow-clients.test.js');
