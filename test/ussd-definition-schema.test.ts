// The service definition format: the published JSON Schema is the one the valibot schema generates, and a
// file with a problem is refused with its line (YAML and JSON alike).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { serviceJsonSchemaText } from '../dist/src/ussd/services/json-schema.js';
import { parseServiceText } from '../dist/src/ussd/services/parse.js';
import { englishServiceHead } from './helpers/ussd-services.js';

const MINIMAL = `${englishServiceHead('demo', '*500#', 'hello')}states:
  hello:
    type: menu
    text: Hello
    options:
      - { key: '1', text: Bye, next: bye }
  bye:
    type: end
    text: Goodbye
`;

t.test('schemas/ussd-service.schema.json is what the valibot schema generates', async (t) => {
  const committed = readFileSync(new URL('../schemas/ussd-service.schema.json', import.meta.url), 'utf8');
  t.equal(
    committed,
    serviceJsonSchemaText(),
    'regenerate: npm run build && node dist/src/ussd/services/json-schema.js > schemas/ussd-service.schema.json',
  );
  const schema = JSON.parse(committed);
  t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  t.same(schema.required.sort(), [
    'defaultLanguage',
    'id',
    'labels',
    'languages',
    'messages',
    'serviceCodes',
    'start',
    'states',
    'version',
  ]);
  t.ok(schema.$defs.MenuState && schema.$defs.Text, 'states and texts are named definitions');
  t.same(schema.$defs.Query.required, ['path'], "a query action's query is named too: its path required");
});

t.test('a valid file parses, defaults filled in', async (t) => {
  const parsed = parseServiceText(MINIMAL, 'demo.yaml');
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.equal(parsed.definition.screenLimit, 182);
  t.same(parsed.definition.navigation, { back: '0', home: '00', exit: '*', more: '98' });
  t.equal(parsed.lineOf(['states', 'bye']), 15);
  const json = parseServiceText(JSON.stringify(parsed.definition, null, 2), 'demo.json');
  t.ok(json.ok, 'the same service as JSON');
});

t.test('problems name the file, the line and what is wrong', async (t) => {
  const wrongType = parseServiceText(MINIMAL.replace('type: end', 'type: finish'), 'demo.yaml');
  t.notOk(wrongType.ok);
  if (wrongType.ok) return;
  t.match(wrongType.problems[0], { file: 'demo.yaml', line: 16, path: 'states.bye.type' });

  const unknownField = parseServiceText(
    MINIMAL.replace('    text: Goodbye', '    text: Goodbye\n    colour: red'),
    'demo.yaml',
  );
  t.notOk(unknownField.ok);
  if (!unknownField.ok) t.match(unknownField.problems[0], { line: 18, message: /unknown field "colour"/ });

  const badKey = parseServiceText(MINIMAL.replace("key: '1'", "key: 'one'"), 'demo.yaml');
  t.notOk(badKey.ok);
  if (!badKey.ok) t.match(badKey.problems[0], { line: 14, message: /option key/ });

  const yamlError = parseServiceText(`${MINIMAL}  bye: { type: end }\n`, 'demo.yaml');
  t.notOk(yamlError.ok, 'a duplicate key is refused');
  if (!yamlError.ok) t.match(yamlError.problems[0], { line: 18 });

  const json = JSON.stringify(
    { ...JSON.parse(JSON.stringify((parseServiceText(MINIMAL, 'x') as any).definition)), version: '' },
    null,
    2,
  );
  const badJson = parseServiceText(json, 'demo.json');
  t.notOk(badJson.ok);
  if (!badJson.ok) t.match(badJson.problems[0], { file: 'demo.json', line: 3, path: 'version' });
  const broken = parseServiceText('{ "id": "demo", ', 'demo.json');
  t.notOk(broken.ok);
  if (!broken.ok) t.equal(broken.problems[0].line, 1);
});
