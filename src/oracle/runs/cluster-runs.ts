// Runs on: the main thread (front door), cluster mode.
// Re-joining a run through another node. A run lives on the node whose front door streamed it, and its id starts
// with that node's tag (`<tag>.<turn id>`). A node asked for a run of another tag requests it on core NATS
// (`<prefix>.runs.<tag>`: run id, user, `after`, a fresh inbox); the holder answers whether it has it, then
// attaches a reader that publishes the frames on the inbox (`{ s, t }`, numbered, then `{ s, end }`), and detaches
// when the asker says `<inbox>.gone`. The asker writes them to its client; a gap (NATS dropped a message) or
// silence past the heartbeat ends the answer, and the client re-joins from the last frame it has, as it does
// after any dropped stream.
import { createInbox, nuid, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { ClusterConnection } from '../../cluster/connection.js';
import type { StreamWriter } from '../../http/types.js';
import type { Logger } from '../../log.js';
import type { RunRegistry } from './registry.js';

interface JoinRequest {
  runId: string;
  userDid: string;
  after: number;
  inbox: string;
}

type JoinAnswer = { found: false } | { found: true; requestId: string };
type InboxMessage = { s: number; t: string } | { s: number; end: true };

/** The frames of a remote run, ready to be written to a client. */
export interface RemoteRun {
  requestId: string;
  /** Writes the run to `writer` until it ends, a gap, or `silentMs` without a word; stops when `writer` closes. */
  pipe(writer: StreamWriter): void;
}

export class ClusterRuns {
  /** This node's tag: the first part of the id of every run it holds. */
  readonly tag = nuid.next();
  readonly #nc: NatsConnection;
  readonly #subject: (tag: string) => string;
  readonly #serving: Subscription;
  /** Every node answers here for the runs in progress it streamed (GET /sessions/:id/run through another node). */
  readonly #sessions: Subscription;
  readonly #sessionsSubject: string;

  constructor(
    connection: ClusterConnection,
    private readonly registry: RunRegistry,
    private readonly silentMs: number,
    private readonly log: Logger,
  ) {
    this.#nc = connection.nc;
    this.#subject = (tag) => `${connection.prefix}.runs.${tag}`;
    this.#sessionsSubject = `${connection.prefix}.runs-by-session`;
    this.#sessions = this.#nc.subscribe(this.#sessionsSubject, {
      callback: (error, msg) => {
        if (error) return;
        const { sessionId, userDid } = msg.json<{ sessionId: string; userDid: string }>();
        const run = this.registry.running(sessionId, userDid);
        // Only the holder answers: the asker takes the first answer, or none within its wait.
        if (run) msg.respond(JSON.stringify({ runId: run.info.runId, status: run.status }));
      },
    });
    this.#serving = this.#nc.subscribe(this.#subject(this.tag), {
      callback: (error, msg) => {
        if (error) return;
        try {
          this.#serve(msg.json<JoinRequest>(), (answer) => msg.respond(JSON.stringify(answer)));
        } catch (failure) {
          this.log.warn({ err: failure }, 'run re-join request failed');
        }
      },
    });
  }

  /** Whether `runId` was streamed by another node. */
  isRemote(runId: string): boolean {
    const dot = runId.indexOf('.');
    return dot > 0 && runId.slice(0, dot) !== this.tag;
  }

  /** Asks the node that holds `runId` for its frames after `after`; undefined when it has none for this user. */
  async join(runId: string, userDid: string, after: number): Promise<RemoteRun | undefined> {
    const inbox = createInbox();
    const sub = this.#nc.subscribe(inbox);
    let answer: JoinAnswer;
    try {
      const reply = await this.#nc.request(
        this.#subject(runId.slice(0, runId.indexOf('.'))),
        JSON.stringify({ runId, userDid, after, inbox } satisfies JoinRequest),
        { timeout: 5_000 },
      );
      answer = reply.json<JoinAnswer>();
    } catch {
      answer = { found: false }; // no responders: that node is gone, and its runs with it
    }
    if (!answer.found) {
      sub.unsubscribe();
      return undefined;
    }
    return { requestId: answer.requestId, pipe: (writer) => void this.#pipe(sub, inbox, writer) };
  }

  /** The session's run in progress on another node, asked of all of them (none within `waitMs`: none). */
  async running(
    sessionId: string,
    userDid: string,
    waitMs = 500,
  ): Promise<{ runId: string; status: string } | undefined> {
    try {
      return (
        await this.#nc.request(this.#sessionsSubject, JSON.stringify({ sessionId, userDid }), { timeout: waitMs })
      ).json();
    } catch {
      return undefined;
    }
  }

  stop(): void {
    this.#serving.unsubscribe();
    this.#sessions.unsubscribe();
  }

  async #pipe(sub: Subscription, inbox: string, writer: StreamWriter): Promise<void> {
    let silence: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(silence);
      sub.unsubscribe();
      if (!writer.closed) writer.end();
    };
    const quiet = () => {
      clearTimeout(silence);
      silence = setTimeout(finish, this.silentMs);
    };
    writer.onClose(() => {
      if (!this.#nc.isClosed()) this.#nc.publish(`${inbox}.gone`);
      finish();
    });
    quiet();
    let expected = 0;
    for await (const msg of sub) {
      const message = msg.json<InboxMessage>();
      if (message.s !== expected++ || 'end' in message) break;
      writer.write(message.t);
      quiet();
    }
    finish();
  }

  #serve(request: JoinRequest, respond: (answer: JoinAnswer) => void): void {
    const run = this.registry.get(request.runId, request.userDid);
    const missed = run?.framesAfter(request.after);
    if (!run || missed === undefined) return respond({ found: false });
    respond({ found: true, requestId: run.info.requestId });
    const reader = new InboxReader(this.#nc, request.inbox);
    reader.write(run.runFrame(run.partialLength()) + missed);
    if (run.endedAt !== undefined) reader.end();
    else run.attach(reader);
    this.log.debug({ runId: request.runId }, 'run re-joined from another node');
  }
}

/** A run's reader on another node: what it is given goes to that node's inbox, numbered. */
class InboxReader implements StreamWriter {
  #seq = 0;
  #closed = false;
  readonly #listeners: (() => void)[] = [];
  readonly #gone: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    private readonly inbox: string,
  ) {
    this.#gone = nc.subscribe(`${inbox}.gone`, { max: 1, callback: () => this.#close() });
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(chunk: string): boolean {
    if (this.#closed || this.nc.isClosed()) return false;
    this.nc.publish(this.inbox, JSON.stringify({ s: this.#seq++, t: chunk } satisfies InboxMessage));
    return true;
  }

  onDrain(): void {}

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#listeners.push(listener);
  }

  end(): void {
    if (this.#closed) return;
    if (!this.nc.isClosed())
      this.nc.publish(this.inbox, JSON.stringify({ s: this.#seq++, end: true } satisfies InboxMessage));
    this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#gone.unsubscribe();
    for (const listener of this.#listeners.splice(0)) listener();
  }
}
