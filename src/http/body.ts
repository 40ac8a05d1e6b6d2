// Request body decoding: JSON and application/x-www-form-urlencoded.
export interface DecodedBody {
  body: unknown;
  bodyError?: string;
}

export function decodeBody(raw: Buffer, contentType: string): DecodedBody {
  if (raw.length === 0) return { body: undefined };
  // The common case, exactly `application/json`, without splitting and lower-casing the header.
  const type = contentType === 'application/json' ? contentType : contentType.split(';', 1)[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    return { body: Object.fromEntries(new URLSearchParams(raw.toString('utf8'))) };
  }
  if (type === 'application/json' || type.endsWith('+json') || type === '') {
    try {
      return { body: JSON.parse(raw.toString('utf8')) };
    } catch {
      return { body: undefined, bodyError: 'Malformed JSON body' };
    }
  }
  return { body: undefined, bodyError: `Unsupported content type ${type}` };
}
