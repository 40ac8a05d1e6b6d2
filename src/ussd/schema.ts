// Front door (main thread): the USSD request as the spec and the aggregators send it (JSON or form-urlencoded).
import * as v from 'valibot';

/** No control characters: gateways send digits, `*`, `#` and typed text only. */
const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;

export const UssdRequestSchema = v.object({
  sessionId: v.pipe(v.string(), v.trim(), v.minLength(1, 'sessionId is required'), v.maxLength(100, 'sessionId is at most 100 characters'), v.regex(PRINTABLE, 'sessionId has control characters')),
  serviceCode: v.pipe(v.string(), v.trim(), v.regex(/^\*\d+(\*\d+)*#$/, 'serviceCode must look like *123# or *123*4#')),
  phoneNumber: v.pipe(v.string(), v.trim(), v.regex(/^\+[1-9]\d{6,14}$/, 'phoneNumber must be E.164: + then 7 to 15 digits')),
  text: v.pipe(v.string(), v.maxLength(182, 'text is at most 182 characters'), v.regex(PRINTABLE, 'text has control characters')),
  networkCode: v.optional(v.pipe(v.string(), v.maxLength(20))),
});

export type UssdRequest = v.InferOutput<typeof UssdRequestSchema>;

