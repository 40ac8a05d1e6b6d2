// The oracle chat client: connect (key, delegation), sessions, streamed turns and the event channel.
import { storedTurn, humanTurn, TurnView } from './chat-view.js';
import { appendLog, byId, el, errorMessage } from './dom.js';
import { EventChannel } from './event-channel.js';
import { failure, OracleClient, type SessionRecord } from './oracle-client.js';
import { eventItem } from './readable.js';
import { pageTools } from './page-tools.js';
import { UcanIdentity } from './ucan.js';

export function setupChat(): void {
  const connect = byId<HTMLButtonElement>('chat-connect');
  const newKey = byId<HTMLButtonElement>('chat-new-key');
  const identityLine = byId('chat-identity');
  const newSession = byId<HTMLButtonElement>('chat-new-session');
  const sessionList = byId('chat-sessions');
  const transcript = byId('chat-transcript');
  const input = byId<HTMLInputElement>('chat-input');
  const send = byId<HTMLButtonElement>('chat-send');
  const abort = byId<HTMLButtonElement>('chat-abort');
  const events = byId('chat-events');
  const socketState = byId('chat-socket-state');
  byId('chat-tools').textContent = pageTools.map((tool) => tool.name).join(', ');

  let client: OracleClient | undefined;
  let current: string | undefined;
  let turn: AbortController | undefined;

  const channel = new EventChannel({
    onEvent({ event, data }, direction) {
      appendLog(events, eventItem(event, data, direction));
    },
    onState(state, reason) {
      socketState.textContent = reason ? `${state} (${reason})` : state;
      socketState.dataset.state = state;
    },
  });

  // Typing is always possible outside a turn: sending connects and starts a session when there is none yet.
  let starting = false;
  const render = () => {
    input.disabled = send.disabled = turn !== undefined || starting;
    abort.disabled = turn === undefined;
    newSession.disabled = newKey.disabled = client === undefined;
  };

  const report = (message: string) => {
    transcript.append(el('p', message, { class: 'error', role: 'alert' }));
  };

  const refreshSessions = async () => {
    if (!client) return;
    const { sessions } = await client.listSessions();
    sessionList.replaceChildren(...sessions.map(sessionItem));
  };

  const sessionItem = (session: SessionRecord) => {
    const item = el('li', '', { 'data-session-id': session.sessionId });
    if (session.sessionId === current) item.setAttribute('aria-current', 'true');
    const label = `${session.title} · ${new Date(session.lastUpdatedAt).toLocaleTimeString()}`;
    const open = el('button', label, { type: 'button', class: 'link' });
    open.addEventListener('click', () => void selectSession(session.sessionId));
    const remove = el('button', 'Delete', {
      type: 'button',
      'aria-label': `Delete session ${session.title} ${session.sessionId.slice(0, 8)}`,
    });
    remove.addEventListener('click', () => void deleteSession(session.sessionId));
    item.append(open, remove);
    return item;
  };

  const selectSession = async (sessionId: string) => {
    if (!client) return;
    turn?.abort();
    current = sessionId;
    transcript.replaceChildren();
    render();
    try {
      const { messages } = await client.transcript(sessionId);
      transcript.append(...messages.map(storedTurn));
      await refreshSessions();
      await channel.open(client, sessionId);
    } catch (error) {
      report(errorMessage(error));
    }
    input.focus();
  };

  const deleteSession = async (sessionId: string) => {
    if (!client) return;
    try {
      await client.deleteSession(sessionId);
      if (sessionId === current) {
        current = undefined;
        channel.close();
        transcript.replaceChildren();
      }
      await refreshSessions();
    } catch (error) {
      report(errorMessage(error));
    }
    render();
  };

  const open = async (fresh: boolean) => {
    connect.disabled = true;
    identityLine.textContent = 'Connecting…';
    try {
      if (!window.isSecureContext)
        throw new Error(
          'Browsers give WebCrypto only to secure pages: open the playground at localhost, 127.0.0.1 or over HTTPS.',
        );
      const answer = await fetch('/playground/config.json');
      if (!answer.ok) throw await failure(answer);
      const config = (await answer.json()) as { oracleDid: string; oracleName: string };
      const identity = await UcanIdentity.open(config.oracleDid, fresh);
      client = new OracleClient(identity);
      await client.storeDelegation();
      identityLine.textContent = `You are ${identity.did}; delegated to ${config.oracleName} (${config.oracleDid}).`;
      identityLine.dataset.connected = 'true';
      current = undefined;
      channel.close();
      transcript.replaceChildren();
      await refreshSessions();
    } catch (error) {
      client = undefined;
      identityLine.textContent = `Could not connect: ${errorMessage(error)}`;
    } finally {
      connect.disabled = false;
      connect.textContent = client ? 'Reconnect' : 'Connect';
      render();
    }
  };
  connect.addEventListener('click', () => void open(false));
  newKey.addEventListener('click', () => void open(true));

  /** Creates a session and opens it; false (the reason reported) when it could not. */
  const startSession = async (): Promise<boolean> => {
    if (!client) return false;
    try {
      const session = await client.createSession();
      await selectSession(session.sessionId);
      return current === session.sessionId;
    } catch (error) {
      report(errorMessage(error));
      return false;
    }
  };
  newSession.addEventListener('click', () => void startSession());

  /** What a message needs before it can be sent: a connection and a session, made now when missing. */
  const ready = async (): Promise<boolean> => {
    if (client && current) return true;
    starting = true;
    render();
    try {
      if (!client) await open(false);
      if (!client) {
        report(`Not connected: ${identityLine.textContent ?? ''}`);
        return false;
      }
      return current !== undefined || (await startSession());
    } finally {
      starting = false;
      render();
    }
  };

  byId<HTMLFormElement>('chat-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || turn || starting) return;
    if (!(await ready()) || !client || !current) return;
    input.value = '';
    const view = new TurnView();
    transcript.append(humanTurn(text), view.element);
    turn = new AbortController();
    render();
    try {
      await client.stream(
        current,
        text,
        pageTools,
        (frame) => {
          view.apply(frame);
          transcript.scrollTop = transcript.scrollHeight;
        },
        turn.signal,
      );
      await refreshSessions();
    } catch (error) {
      view.fail(turn.signal.aborted ? 'Stopped.' : errorMessage(error));
    } finally {
      turn = undefined;
      render();
      input.focus();
    }
  });

  abort.addEventListener('click', () => {
    if (client && current) void client.abort(current).catch(() => undefined);
  });
  render();
}
