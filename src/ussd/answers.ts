// The fixed answers of the spec. Both are HTTP 200 text/plain: a gateway ends the user's session on any non-2xx.
export const INVALID_INPUT = 'END Invalid input. Please try again.';
export const SERVICE_UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
export const SESSION_EXPIRED = 'END Your session has expired. Please dial again.';
