// Chat turns and credit debits as a load beside the partition tests' USSD load (test/cluster-partitions.test.ts):
// callers of one fresh user stream turns, each through the next node. A turn is acknowledged when its stream ends
// with done status "finished", refused when answered 402, "opened" when its stream opened (charged) but ended
// otherwise, and in doubt when no stream opened and no 402 came (an error, a 5xx, a timeout: charged or not).
import type { Test } from 'tap';
import type { ClusterConnection } from '../../dist/src/cluster/connection.js';
import { openJetStreamCredits } from '../../dist/src/cluster/records/oracle/credits.js';
import { until } from './cluster-nodes.js';
import { call, newUser, openStream, sseEvents, type User } from './oracle.js';

type Node = { readonly url: string };
type Outcome = 'finished' | 'refused' | 'opened' | 'doubt';
interface Turn {
  sessionId: string;
  message: string;
  outcome: Outcome;
  /** Why a turn is in doubt (the status, or the error's name), for the log. */
  why?: string;
}

/** A turn not over by then is given up (in doubt): a paused or cut cluster must not hold the load. */
const TURN_BOUND_MS = 20_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sendTurn(
  node: Node,
  user: User,
  sessionId: string,
  message: string,
): Promise<Omit<Turn, 'sessionId' | 'message'>> {
  let opened = false;
  try {
    const res = await openStream(node, user, sessionId, { message }, AbortSignal.timeout(TURN_BOUND_MS));
    if (res.status === 402) {
      await res.body?.cancel();
      return { outcome: 'refused' };
    }
    if (res.status !== 200) {
      const body = (await res.json().catch(() => ({}))) as { message?: unknown };
      return { outcome: 'doubt', why: `${res.status} ${String(body.message).slice(0, 60)}` };
    }
    opened = true;
    let status: unknown;
    for await (const item of sseEvents(res)) if (item.event === 'done') status = item.data?.status;
    return { outcome: status === 'finished' ? 'finished' : 'opened' };
  } catch (error) {
    return opened ? { outcome: 'opened' } : { outcome: 'doubt', why: (error as Error).name };
  }
}

/** `callers` sessions of one new user sending turns until `stop()`. */
export async function chatLoad(nodes: readonly Node[], oracleDid: string, label: string, callers = 2) {
  let stopped = false;
  const user = await newUser(oracleDid);
  const turns: Turn[] = [];
  const caller = async (c: number) => {
    let sessionId: string | undefined;
    for (let n = c; sessionId === undefined && !stopped; n++) {
      const answer = await call(nodes[n % nodes.length], 'POST', '/sessions', { user }).catch(() => undefined);
      if (answer?.status === 201) sessionId = answer.body.sessionId as string;
      else await sleep(200);
    }
    for (let n = c; sessionId !== undefined && !stopped; n++) {
      const message = `${label} caller ${c} turn ${n}`;
      const turn = { sessionId, message, ...(await sendTurn(nodes[n % nodes.length], user, sessionId, message)) };
      turns.push(turn);
      await sleep(turn.outcome === 'finished' ? 400 : 200);
    }
  };
  const running = Promise.all(Array.from({ length: callers }, (_, c) => caller(c)));
  return {
    user,
    turns,
    finished: () => turns.filter((turn) => turn.outcome === 'finished').length,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * After a scenario: every acknowledged turn is in its session's history exactly once and no refused one is; the
 * turns the server accepted never exceed the user's credits, and the balance fell by the accepted turns (plus at
 * most the ones in doubt).
 */
export async function checkChat(
  t: Test,
  label: string,
  chat: Awaited<ReturnType<typeof chatLoad>>,
  nodes: readonly Node[],
  observer: ClusterConnection,
  initialCredits: number,
) {
  const count = (outcome: Outcome) => chat.turns.filter((turn) => turn.outcome === outcome).length;
  t.comment(
    `${label}: chat turns ${count('finished')} finished, ${count('opened')} opened but not finished, ` +
      `${count('refused')} refused (402), ${count('doubt')} in doubt ` +
      `(${chat.turns.flatMap((turn) => turn.why ?? []).join(', ') || 'none'})`,
  );
  t.ok(count('finished') > 0, `${label}: chat turns were acknowledged`);
  t.same(
    chat.turns.flatMap((turn) => (turn.why?.startsWith('500') ? [`${turn.message}: ${turn.why}`] : [])),
    [],
    `${label}: a turn the fault stopped is answered 503 (try again), never 500`,
  );
  const wrong: string[] = [];
  for (const [s, sessionId] of [...new Set(chat.turns.map((turn) => turn.sessionId))].entries()) {
    const history = await until(
      `${label}: the history of ${sessionId}`,
      async () => {
        const answer = await call(nodes[s % nodes.length], 'GET', `/messages/${sessionId}`, { user: chat.user });
        return answer.status === 200 ? (answer.body.messages as { type: string; content: unknown }[]) : undefined;
      },
      30_000,
    );
    for (const turn of chat.turns.filter((turn) => turn.sessionId === sessionId)) {
      const times = history.filter((m) => m.type === 'human' && m.content === turn.message).length;
      if ((turn.outcome === 'finished' && times !== 1) || (turn.outcome === 'refused' && times !== 0))
        wrong.push(`${turn.message} (${turn.outcome}) recorded ${times} times`);
    }
  }
  t.same(wrong, [], `${label}: each acknowledged turn is in its history once, no refused one is`);

  const accepted = count('finished') + count('opened');
  t.ok(accepted <= initialCredits, `${label}: ${accepted} turns accepted, no more than the ${initialCredits} credits`);
  const credits = await openJetStreamCredits(observer);
  const balance = (await credits.get(chat.user.did))?.value.balance ?? initialCredits;
  const spent = initialCredits - balance;
  t.ok(
    spent >= accepted && spent <= accepted + count('doubt'),
    `${label}: the balance (${balance}) fell by the accepted turns (${accepted}, ${count('doubt')} in doubt)`,
  );
}
