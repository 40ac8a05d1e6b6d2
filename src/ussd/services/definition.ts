// Thread: any (loaded by the server, the checker and the tests)
// The format of a USSD service definition, one
// file per service (YAML or JSON), as a valibot schema. schemas/ussd-service.schema.json is its JSON Schema form
// for editors (test/ussd-definition-schema.test.ts keeps the two equal). This schema checks shapes only; the
// rules across fields (every state named exists, every text in every language) are in services/rules.ts.
//
// Text is plain: `{{name}}` is replaced by a session value, `{{account.customerId}}` by a field of the logged-in
// account, `{{name|fallback}}` uses the fallback when the value is missing. Nothing in a file is ever run.
import * as v from 'valibot';

/** A state, value or option name: letters, digits, `_`, `-`, `.`, starting with a letter. */
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const SERVICE_ID = /^[a-z][a-z0-9-]{0,63}$/;
/** A service code as the gateway sends it: `*384#`, `*384*2#`. */
export const SERVICE_CODE = /^\*\d+(\*\d+)*#$/;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;
/** Keys a user can type on a phone keypad for an option or a navigation: digits, `*` and `#`. */
const KEY = /^[0-9*#]{1,8}$/;

const name = (what: string) => v.pipe(v.string(), v.regex(NAME, `${what} must be a name like askName (letters first)`));
const stateRef = name('a state name');
const valueName = name('a value name');

/** A user-visible string: one per language (`{ en: ..., sw: ... }`), or a plain string in a one-language service. */
export const TextSchema = v.union(
  [
    v.pipe(v.string(), v.maxLength(1000)),
    v.pipe(
      v.record(
        v.pipe(v.string(), v.regex(LANGUAGE, 'a language code like en or sw')),
        v.pipe(v.string(), v.maxLength(1000)),
      ),
      v.minEntries(1, 'a text needs at least one language'),
    ),
  ],
  'a text: a string, or one string per language ({ en: ..., sw: ... })',
);

/** A test of one session value: set (present and not empty) or unset, or equal to a string. */
export const ConditionSchema = v.strictObject({
  value: name('a value name'),
  equals: v.optional(v.string()),
  set: v.optional(v.boolean()),
});

/** Values written when an option is chosen or a branch taken: value name → template. */
const AssignmentsSchema = v.record(valueName, v.pipe(v.string(), v.maxLength(200)));

export const OptionSchema = v.strictObject({
  key: v.pipe(v.string(), v.regex(KEY, 'an option key is 1-8 of 0-9, * and #')),
  text: TextSchema,
  next: stateRef,
  /** Offered only while this holds; two options may share a key when their conditions differ. */
  when: v.optional(ConditionSchema),
  set: v.optional(AssignmentsSchema),
});

/** Where a refused input or an action's outcome leads, with a line shown above that state's screen. */
export const BranchSchema = v.strictObject({
  next: stateRef,
  notice: v.optional(TextSchema),
  set: v.optional(AssignmentsSchema),
});

/** Fields every state may have. */
const common = {
  /** `0` (the back key) leads there; the screen shows `0. Back`. */
  back: v.optional(stateRef),
  /** `00` leads to the service's home state. */
  home: v.optional(v.boolean()),
  /** `*` ends the session with this text. */
  exit: v.optional(TextSchema),
  /** Only for a logged-in customer: others are sent to the service's loginRequired branch. */
  requiresLogin: v.optional(v.boolean()),
  /** The session values kept on entering this state (others are forgotten); all of them when absent. */
  keep: v.optional(v.array(valueName)),
  /**
   * Values that may be shortened (cut marked with `..`) so the screen fits the limit, room kept for the longest
   * notice; in order, each leaving at least half the room to the ones after it.
   */
  shorten: v.optional(v.array(name('a value name'))),
};

export const MenuStateSchema = v.strictObject({
  type: v.literal('menu'),
  text: TextSchema,
  options: v.optional(v.array(OptionSchema), []),
  ...common,
});

export const VALIDATION_KINDS = ['text', 'number', 'phone', 'pin', 'date', 'email', 'customerId'] as const;

/**
 * What an input must be. `text`: trimmed, runs of spaces made one, then length and pattern (Unicode regex).
 * `number`: digits, in [min, max]. `phone`: E.164. `pin`: `digits` digits (default 5); policy `strong` also refuses
 * repeated or sequential digits and the end of the phone number; `differentFrom`/`sameAs` compare with a PIN saved
 * earlier. `date`: DDMMYYYY, a real day. `email`. `customerId`: C and 8 hex digits (upper-cased).
 * A pin is saved encrypted for this session only and never shown.
 */
export const ValidationSchema = v.strictObject({
  kind: v.picklist(VALIDATION_KINDS),
  pattern: v.optional(v.pipe(v.string(), v.maxLength(200))),
  minLength: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  maxLength: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(182))),
  min: v.optional(v.number()),
  max: v.optional(v.number()),
  digits: v.optional(v.pipe(v.number(), v.integer(), v.minValue(4), v.maxValue(12))),
  policy: v.optional(v.picklist(['any', 'strong'])),
  differentFrom: v.optional(valueName),
  sameAs: v.optional(valueName),
});

/** Why an input was refused; `invalid` covers every reason without its own branch. */
export const REFUSALS = ['invalid', 'format', 'weak', 'phone', 'same', 'mismatch', 'range'] as const;

export const InputStateSchema = v.strictObject({
  type: v.literal('input'),
  prompt: TextSchema,
  validate: v.optional(ValidationSchema),
  /** The value name the input is saved under; a check-only input (a PIN confirmation) saves nothing. */
  save: v.optional(valueName),
  next: stateRef,
  /** The refusal shown for any reason not listed in `refusals`. */
  invalid: BranchSchema,
  refusals: v.optional(v.record(v.picklist(REFUSALS), BranchSchema)),
  /** Typing this key skips the input: the value is left unset. */
  skip: v.optional(v.strictObject({ key: v.pipe(v.string(), v.regex(KEY)), next: v.optional(stateRef) })),
  ...common,
});

export const ACTIONS = [
  'createAccount',
  'findAccount',
  'logIn',
  'verifyPin',
  'changePin',
  'logOut',
  'http',
  'notify',
] as const;

/** An environment variable's name: where a secret comes from (a definition file never holds one). */
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;
const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;

/**
 * The endpoint of an `http` or `notify` action (docs/ussd-actions.md). `headers` take their values from the
 * environment (`{ env: SHOP_TOKEN, prefix: 'Bearer ' }`); `save` maps a value name to a field of the JSON answer
 * (`balance`, `account.name`).
 */
export const RequestSchema = v.strictObject({
  url: v.pipe(v.string(), v.maxLength(500), v.regex(/^https?:\/\/[^\s]+$/, 'url: an http:// or https:// address')),
  /** The session values sent (by name); a PIN never is. */
  values: v.optional(v.array(valueName)),
  headers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(HEADER_NAME, 'a header name like X-Api-Key')),
      v.strictObject({
        env: v.pipe(v.string(), v.regex(ENV_NAME, 'an environment variable like SHOP_TOKEN')),
        prefix: v.optional(v.pipe(v.string(), v.maxLength(40))),
      }),
    ),
  ),
  /** The whole call's time, retries included (default 2000 ms). */
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(10_000))),
  /** `http`: value name → field of the answer (a dotted path). */
  save: v.optional(v.record(valueName, v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,100}$/, 'a field path')))),
  /** `notify`: deliveries tried before giving up (default 8). */
  attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(20))),
});

/**
 * A built-in action, then a branch on its outcome. Which values each reads and which outcomes it has are listed
 * in ACTION_SPECS (services/actions.ts), docs/ussd-services.md and docs/ussd-actions.md; `http` and `notify`
 * need a `request`.
 */
export const ActionStateSchema = v.strictObject({
  type: v.literal('action'),
  action: v.picklist(ACTIONS),
  request: v.optional(RequestSchema),
  outcomes: v.record(name('an outcome'), BranchSchema),
  ...common,
});

export const LanguageStateSchema = v.strictObject({
  type: v.literal('language'),
  /** The title above the list of the service's languages (numbered 1, 2, ... in their own names). */
  text: TextSchema,
  next: stateRef,
  ...common,
});

export const EndStateSchema = v.strictObject({
  type: v.literal('end'),
  text: TextSchema,
  ...common,
});

export const StateSchema = v.variant('type', [
  MenuStateSchema,
  InputStateSchema,
  ActionStateSchema,
  LanguageStateSchema,
  EndStateSchema,
]);

const key = (fallback: string) =>
  v.optional(v.pipe(v.string(), v.regex(KEY, 'a key is 1-8 of 0-9, * and #')), fallback);

export const NavigationSchema = v.strictObject({
  back: key('0'),
  home: key('00'),
  exit: key('*'),
  more: key('98'),
});

export const ServiceCodeSchema = v.union([
  v.pipe(v.string(), v.regex(SERVICE_CODE, 'a service code like *384# or *384*2#')),
  v.strictObject({
    code: v.pipe(v.string(), v.regex(SERVICE_CODE, 'a service code like *384# or *384*2#')),
    /** The state this code starts at (the service's start state when absent). */
    start: stateRef,
  }),
]);

/** The longest a saved point of a timed-out session may be offered for (the cluster bucket's max age). */
export const MAX_RESUME_SECONDS = 3600;

/**
 * Offered on a dial when the same phone left the same service mid-flow (a timeout, or the gateway ended it) less
 * than `withinSeconds` before (docs/ussd-resume.md): `text` above the continue and restart options.
 */
export const ResumeSchema = v.strictObject({
  withinSeconds: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_RESUME_SECONDS)),
  text: TextSchema,
  continue: v.strictObject({ key: key('1'), text: TextSchema }),
  restart: v.strictObject({ key: key('2'), text: TextSchema }),
});

export const ServiceDefinitionSchema = v.strictObject({
  /** Optional pointer to the JSON Schema, for editors. */
  $schema: v.optional(v.string()),
  id: v.pipe(v.string(), v.regex(SERVICE_ID, 'id: lower-case letters, digits and -, like my-shop')),
  version: v.pipe(v.string(), v.regex(/^[0-9A-Za-z][0-9A-Za-z.+-]{0,31}$/, 'version: like 1.0.0')),
  name: v.optional(v.pipe(v.string(), v.maxLength(60))),
  serviceCodes: v.pipe(v.array(ServiceCodeSchema), v.minLength(1, 'serviceCodes: at least one')),
  /** Language code → its name in that language, as the language menu shows it. */
  languages: v.pipe(
    v.record(
      v.pipe(v.string(), v.regex(LANGUAGE, 'a language code like en or sw')),
      v.pipe(v.string(), v.maxLength(30)),
    ),
    v.minEntries(1, 'languages: at least one'),
  ),
  defaultLanguage: v.pipe(v.string(), v.regex(LANGUAGE)),
  navigation: v.optional(NavigationSchema, {}),
  /** The labels of the navigation lines (`0. Back`, `00. Home`, `*. Exit`, `98. More`). */
  labels: v.strictObject({ back: TextSchema, home: TextSchema, exit: TextSchema, more: TextSchema }),
  /** The notices the engine shows itself. */
  messages: v.strictObject({ invalidChoice: TextSchema, loginRequired: TextSchema }),
  /** Longest answer in characters, `CON `/`END ` included. */
  screenLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(1000)), 182),
  start: stateRef,
  /** Where the home key leads (the start state when absent). */
  home: v.optional(stateRef),
  /** Where a state that requires login sends a user who is not logged in (the home state when absent). */
  loginRequired: v.optional(stateRef),
  states: v.pipe(v.record(stateRef, StateSchema), v.minEntries(1, 'states: at least one')),
  /** Continue after a timeout: off when absent. */
  resume: v.optional(ResumeSchema),
});

export type Text = v.InferOutput<typeof TextSchema>;
export type Condition = v.InferOutput<typeof ConditionSchema>;
export type Option = v.InferOutput<typeof OptionSchema>;
export type Branch = v.InferOutput<typeof BranchSchema>;
export type Validation = v.InferOutput<typeof ValidationSchema>;
export type Refusal = (typeof REFUSALS)[number];
export type ActionName = (typeof ACTIONS)[number];
export type RequestDefinition = v.InferOutput<typeof RequestSchema>;
export type StateDefinition = v.InferOutput<typeof StateSchema>;
export type MenuState = v.InferOutput<typeof MenuStateSchema>;
export type InputState = v.InferOutput<typeof InputStateSchema>;
export type ActionState = v.InferOutput<typeof ActionStateSchema>;
export type LanguageState = v.InferOutput<typeof LanguageStateSchema>;
export type EndState = v.InferOutput<typeof EndStateSchema>;
export type ResumeDefinition = v.InferOutput<typeof ResumeSchema>;
export type ServiceDefinition = v.InferOutput<typeof ServiceDefinitionSchema>;
/** The file as written (before defaults are filled in). */
export type ServiceDefinitionInput = v.InferInput<typeof ServiceDefinitionSchema>;
