// Thread: any
// Build time and tests: the JSON Schema form of the service definition format, published as
// schemas/ussd-service.schema.json so editors check a definition as it is typed. Run this file to print it
// (`node dist/src/ussd/services/json-schema.js > schemas/ussd-service.schema.json`);
// test/ussd-definition-schema.test.ts fails when the committed file differs from what it prints.
import { toJsonSchema } from '@valibot/to-json-schema';
import { fileURLToPath } from 'node:url';
import {
  ActionStateSchema,
  BranchSchema,
  ConditionSchema,
  EndStateSchema,
  InputStateSchema,
  LanguageStateSchema,
  MenuStateSchema,
  OptionSchema,
  QuerySchema,
  RequestSchema,
  ServiceDefinitionSchema,
  TextSchema,
  ValidationSchema,
} from './definition.js';

export const SCHEMA_ID = 'https://session-actor-runtime.invalid/schemas/ussd-service.schema.json';

/** The format as a JSON Schema (draft 2020-12), the file as written (`input`: before defaults). */
export function serviceJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(ServiceDefinitionSchema, {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'ignore',
    // Named once in $defs, so an editor's messages say "Text" or "MenuState", not a long anyOf.
    definitions: {
      Text: TextSchema,
      Condition: ConditionSchema,
      Option: OptionSchema,
      Branch: BranchSchema,
      Request: RequestSchema,
      Query: QuerySchema,
      Validation: ValidationSchema,
      MenuState: MenuStateSchema,
      InputState: InputStateSchema,
      ActionState: ActionStateSchema,
      LanguageState: LanguageStateSchema,
      EndState: EndStateSchema,
    },
  }) as Record<string, unknown>;
  const { $schema: _dialect, ...rest } = schema;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: SCHEMA_ID,
    title: 'USSD service definition',
    ...rest,
  };
}

/** The published file's text: the schema, two-space indented, one final newline. */
export function serviceJsonSchemaText(): string {
  return `${JSON.stringify(serviceJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(serviceJsonSchemaText());
