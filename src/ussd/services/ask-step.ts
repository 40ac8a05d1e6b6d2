// Thread: actor host
// The engine's part of an `ask` state (docs/ussd-ask.md): an input on it is a question (the step then asks the
// front door for a chat turn), or, while a turn is awaited, the answer or `working` again; entering it shows an
// answer kept on the account (a turn that ended after its session did).
import { randomUUID } from 'node:crypto';
import { ASK_ANSWER, ASK_TURN, answerText } from './ask.js';
import type { CompiledState } from './compile.js';
import type { Move, Step } from './engine.js';
import type { Maybe } from './maybe.js';
import { lookupOf } from './step-lookup.js';
import { fill } from './template.js';

/**
 * An input on an ask state: a question, unless a turn is awaited: then its answer shows, or `working` again while
 * the front door looks for it (the turn's own front door may have died: the oracle keeps the run).
 */
export function askMove(step: Step, state: CompiledState): Maybe<Move> {
  const { values, input } = step;
  const turnId = values[ASK_TURN];
  if (turnId !== undefined) {
    if (values[ASK_ANSWER] === undefined) return awaiting(step, state, turnId);
    // Shown here: off the account, where it was kept in case the session ended first.
    delete values[ASK_TURN];
    const taking = step.deps.customers.takeAnswer(step.context.customerId ?? '', step.service.id, turnId);
    return taking.then(() => ({ to: state }));
  }
  if (input === '') return { to: state };
  delete values[ASK_ANSWER];
  const { model, budgetMs } = state.ask ?? {};
  step.ask = { question: input, turnId: randomUUID(), ...(model ? { model } : {}), ...(budgetMs ? { budgetMs } : {}) };
  values[ASK_TURN] = step.ask.turnId;
  return { to: state };
}

/** The step asks the front door for the answer of `turnId`, asked before; the screen shows `working` meanwhile. */
function awaiting(step: Step, state: CompiledState, turnId: string): Move {
  const budgetMs = state.ask?.budgetMs;
  step.ask = { turnId, ...(budgetMs ? { budgetMs } : {}) };
  return { to: state };
}

/**
 * The turn kept on the account for this service's ask state: its answer, now in the step's values (and off the
 * account), or, still pending, awaited as the session's own turn.
 */
export function takeKept(step: Step, state: CompiledState): Promise<void> {
  return step.deps.customers.takeAnswer(step.context.customerId ?? '', step.service.id).then((kept) => {
    if (!kept) return;
    if (kept.pending) {
      step.values[ASK_TURN] = kept.turnId;
      awaiting(step, state, kept.turnId);
      return;
    }
    step.values[ASK_ANSWER] =
      kept.answer === null ? fill(state.ask?.failed[step.language] ?? '', lookupOf(step)) : answerText(kept.answer);
  });
}
