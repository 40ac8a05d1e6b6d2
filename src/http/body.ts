// Thread: main
// Request body decoding: JSON and application/x-www-form-urlencoded.

/**
 * A body's bytes as text: invalid sequences become U+FFFD and a leading BOM is kept (JSON refuses it), as
 * Buffer's toString('utf8') would. Reads uWS's chunk in place: no copy for a body that arrives in one piece.
 */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

export const bodyText = (bytes: ArrayBuffer | Uint8Array): string => utf8.decode(bytes);

export interface DecodedBody {
  body: unknown;
  bodyError?: string;
}

export function decodeBody(text: string, contentType: string): DecodedBody {
  if (text.length === 0) return { body: undefined };
  // The common case, exactly `application/json`, without splitting and lower-casing the header.
  const type = contentType === 'application/json' ? contentType : contentType.split(';', 1)[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    return { body: Object.fromEntries(new URLSearchParams(text)) };
  }
  if (type === 'application/json' || type.endsWith('+json') || type === '') {
    try {
      return { body: JSON.parse(text) };
    } catch {
      return { body: undefined, bodyError: 'Malformed JSON body' };
    }
  }
  return { body: undefined, bodyError: `Unsupported content type ${type}` };
}
