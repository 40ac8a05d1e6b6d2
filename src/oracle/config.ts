// Thread: main
// Environment variables of the oracle face.
import * as v from 'valibot';
import { ed25519 } from '@ucanto/principal';
import { boolean, integer, list, text } from '../base/env-schema.js';
import { mcpEnv } from './mcp-config.js';

function isEd25519PrivateKey(value: string): boolean {
  try {
    ed25519.parse(value);
    return true;
  } catch {
    return false;
  }
}

export const oracleEnv = {
  /** The oracle's Ed25519 key in ucanto's formatted form (`ed25519.format(signer)`); generated into DATA_DIR when unset. */
  ORACLE_PRIVATE_KEY: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check(
        isEd25519PrivateKey,
        'must be an Ed25519 private key as ed25519.format(signer) writes it (base64pad, starts with "M")',
      ),
    ),
  ),
  /** The audience UCANs must name (e.g. a did:ixo); defaults to the key's did:key. */
  ORACLE_DID: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^did:[a-z0-9]+:\S+$/, 'must be a DID (did:<method>:<id>)')),
  ),
  ORACLE_NAME: text('oracle'),
  /** Longest lifetime an authentication invocation may have. */
  UCAN_AUTH_MAX_TTL_SECONDS: integer(900, 1, 31 * 24 * 3600),
  /** OpenAI-compatible chat-completions server (e.g. http://127.0.0.1:11434/v1); unset = the built-in agent. */
  LLM_BASE_URL: v.optional(v.pipe(v.string(), v.trim(), v.url('must be a URL such as https://api.openai.com/v1'))),
  LLM_API_KEY: text(),
  LLM_MODEL: text('gpt-4o-mini'),
  /** The model catalogue as JSON (models.ts): an array of models or `{ models, default }`; wins over ORACLE_MODELS_FILE. */
  ORACLE_MODELS: text(),
  /** A file holding the model catalogue as JSON. */
  ORACLE_MODELS_FILE: text(),
  /** How long a streamed turn that ended stays re-joinable (GET /runs/:id). */
  RUN_RETENTION_SECONDS: integer(300, 1, 24 * 3600),
  /** Frames (bytes) one run keeps for re-joining; the oldest go past it. */
  RUN_MAX_BYTES: integer(1024 * 1024, 16 * 1024, 64 * 1024 * 1024),
  /** Frames (bytes) all runs of a node keep together; past it ended runs are forgotten, oldest first. */
  RUNS_MAX_BYTES: integer(64 * 1024 * 1024, 1024 * 1024, 4 * 1024 * 1024 * 1024),
  /** Chat sessions one user may hold at once; creating one more answers 409 until one is deleted. */
  CHAT_SESSIONS_PER_USER_MAX: integer(1000, 1, 1_000_000),
  /** Bytes one session's transcript may hold (its entries as JSON); a message that would pass it answers 413. */
  CHAT_TRANSCRIPT_MAX_BYTES: integer(8 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
  /** Bound on model calls per message (each tool round trip is one more). */
  AGENT_MAX_STEPS: integer(8, 1, 50),
  /** Comma-separated route patterns or paths that need no UCAN (e.g. `/webhooks/*`), beside the plugins' own. */
  AUTH_EXCLUDED_ROUTES: list(),
  /** Seconds between `: heartbeat` comments on an SSE stream. */
  SSE_HEARTBEAT_SECONDS: integer(15, 1, 3600),
  /** How long a browser tool or agent-UI action waits for the client's result over the event channel. */
  BROWSER_TOOL_TIMEOUT_MS: integer(15_000, 100, 10 * 60_000),
  /** A WebSocket that sends nothing (not even the pong to the server's ping) for this long is closed; uWS needs 8..960. */
  WS_IDLE_TIMEOUT_SECONDS: integer(60, 8, 960),
  /** Largest frame a client may send on the event channel (a bigger one closes the socket); Socket.IO's maxHttpBufferSize too. */
  WS_MAX_PAYLOAD_BYTES: integer(1_000_000, 1024, 64 * 1024 * 1024),
  /**
   * Bytes of unsent frames a WebSocket (/ws or Socket.IO) may hold for a slow reader; past it the socket is closed.
   * At most this plus one frame is held per socket; half of it makes /ws skip answers to a client's pings.
   */
  WS_MAX_BACKPRESSURE_BYTES: integer(256 * 1024, 16 * 1024, 64 * 1024 * 1024),
  /** The key the live agent sends as `x-api-key` to read a call's media key (GET /calls/:id/key); unset: refused. */
  LIVE_AGENT_AUTH_API_KEY: v.optional(
    v.pipe(v.string(), v.trim(), v.minLength(16, 'must be at least 16 characters (a random secret)')),
  ),
  CREDITS_ENABLED: boolean(false),
  CREDITS_INITIAL: integer(10, 0),
  CREDITS_PER_MESSAGE: integer(1, 0),
  ...mcpEnv,
};
