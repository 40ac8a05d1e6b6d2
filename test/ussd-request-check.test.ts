// The USSD request's hand-written check (the route's fast path) against its valibot schema: whatever the check
// accepts, the schema accepts with the same output; the requests gateways send take the fast path.
import assert from 'node:assert/strict';
import t from 'tap';
import fc from 'fast-check';
import * as v from 'valibot';
import { checkUssdRequest, UssdRequestSchema } from '../dist/src/ussd/schema.js';

const padding = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '\r\n '),
);
const control = fc.constantFrom('\u0000', '\u0007', '\u001f', '\u007f', '\u0085');
const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
/** A value of one field: near-valid shapes, boundary lengths, control characters, padding and non-strings. */
const field = (near: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.tuple(padding, near, padding).map(([a, b, c]) => a + b + c) },
    { weight: 1, arbitrary: fc.tuple(near, control, near).map(([a, b, c]) => a + b + c) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.string({ minLength: 95, maxLength: 190 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 7, true, [], {}, ['1'], '') },
  );
const sessionIds = fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ minLength: 98, maxLength: 102 }));
const serviceCodes = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(digits(1, 4), { minLength: 1, maxLength: 3 }).map((parts) => `*${parts.join('*')}#`),
  },
  fc.constantFrom('*123', '123#', '**1#', '*1**2#', '*١٢٣#'),
);
const phones = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(fc.integer({ min: 0, max: 9 }), digits(5, 16)).map(([first, rest]) => `+${first}${rest}`),
  },
  fc.constantFrom('254700000001', '+٢٥٤٧٠٠٠٠٠٠٠١'),
);
const texts = fc.oneof(
  fc.stringMatching(/^[0-9*#]{0,20}$/),
  fc.string({ minLength: 180, maxLength: 184 }),
  fc.string({ maxLength: 30 }),
);
const networkCodes = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 22 }) },
  fc.constantFrom<unknown>(undefined, null, 63902, ''),
);

const fields = {
  sessionId: field(sessionIds),
  serviceCode: field(serviceCodes),
  phoneNumber: field(phones),
  text: field(texts),
  networkCode: networkCodes,
  extra: fc.string(),
};
/** A request as a parsed body holds it: mostly the four fields, sometimes any may be missing; extra keys may be there. */
const requests = fc.oneof(
  { weight: 4, arbitrary: fc.record(fields, { requiredKeys: ['sessionId', 'serviceCode', 'phoneNumber', 'text'] }) },
  { weight: 1, arbitrary: fc.record(fields, { requiredKeys: [] }) },
);

t.test('what the fast path accepts, the schema accepts with the same output', async (t) => {
  let fast = 0;
  fc.assert(
    fc.property(requests, (input) => {
      const quick = checkUssdRequest(input);
      if (quick === undefined) return;
      fast++;
      const parsed = v.safeParse(UssdRequestSchema, input);
      if (!parsed.success)
        throw new Error(
          `the schema refuses ${JSON.stringify(input)}: ${parsed.issues.map((i) => i.message).join('; ')}`,
        );
      assert.deepEqual(Object.keys(quick), Object.keys(parsed.output), 'the same keys in the same order');
      assert.deepEqual(quick, parsed.output);
    }),
    { numRuns: 5_000 },
  );
  t.ok(fast > 500, `the generated requests reach the fast path (${fast} of 5000)`);
});

t.test('what the schema accepts, the fast path accepts too: gateways do not pay for the schema', async (t) => {
  fc.assert(
    fc.property(requests, (input) => {
      const parsed = v.safeParse(UssdRequestSchema, input);
      if (parsed.success) assert.deepEqual(checkUssdRequest(input), parsed.output);
    }),
    { numRuns: 5_000 },
  );
  const gateway = {
    sessionId: 'ATUid_1',
    serviceCode: '*384*1234#',
    phoneNumber: '+254700000001',
    text: '1*2',
    networkCode: '63902',
  };
  t.strictSame(checkUssdRequest(gateway), gateway);
  t.strictSame(
    checkUssdRequest({ ...gateway, networkCode: undefined }),
    { ...gateway, networkCode: undefined },
    'a present, undefined optional key is kept, as valibot keeps it',
  );
  t.equal(checkUssdRequest(null), undefined);
  t.equal(checkUssdRequest('text'), undefined);
});
