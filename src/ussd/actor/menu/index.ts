// Thread: actor host
// The USSD menu: the session actor's one entry to the service engine (services/engine.ts). A new
// dial gets the service its code picks, a live session the version it is pinned to; with no catalog in the
// deps, the built-in service (ussd-services/builtin.yaml) alone.
import { ENDED_STATE, type UssdDial, type UssdSession } from '../../session.js';
import { builtinCatalog, builtinService, type ServiceCatalog } from '../../services/catalog.js';
import type { CompiledService } from '../../services/compile.js';
import { resumeAfter, type ResumeWrite } from '../../services/resume.js';
import {
  andThen,
  apply,
  continueSession,
  welcome as begin,
  type EngineDeps,
  type Maybe,
  type MenuStep,
} from '../../services/engine.js';

export type { MenuStep, ResumeWrite };
export type MenuDeps = EngineDeps;
export { ENDED_STATE };

/** The longest answer of the built-in service, `CON `/`END ` included. */
export const MAX_SCREEN = builtinService().limit;

/** The states of the built-in service a session can rest in (those with a screen). */
export const STATE_NAMES: readonly string[] = [...builtinService().states.values()]
  .filter((state) => state.type === 'menu' || state.type === 'input' || state.type === 'language')
  .map((state) => state.name);

/** An unknown code's answer when the deps say none (the front door answers those first). */
const NO_SERVICE = 'END This service code is not in use.';

const catalogOf = (deps: MenuDeps): ServiceCatalog => deps.catalog ?? builtinCatalog();

/** The session and first screen of a new dial; an END when no service claims its code. */
export function welcome(dial: UssdDial, deps: MenuDeps): Maybe<MenuStep & { unknownCode?: boolean }> {
  const dialled = catalogOf(deps).dial(dial.serviceCode);
  if (!dialled) {
    const now = deps.now();
    const session: UssdSession = {
      ...dial,
      state: ENDED_STATE,
      context: {
        sessionId: dial.sessionId,
        phoneNumber: dial.phoneNumber,
        message: NO_SERVICE.slice(4),
        isAuthenticated: false,
      },
      history: { length: dial.text.length, digest: deps.pinCipher.digest(dial.text) },
      screen: NO_SERVICE,
      createdAt: now,
      updatedAt: now,
      expiresAt: now,
    };
    return { session, screen: deps.unknownCodeScreen ?? NO_SERVICE, ended: true, unknownCode: true };
  }
  const service = dialled.service;
  return andThen(begin(dial, deps, service, dialled.start), (step) =>
    withResume(step, resumeAfter(service, undefined, step.session, step.ended, step.resumeFound === true)),
  );
}

/** The step with the change it makes to its saved point (resume.ts), when it makes one. */
function withResume<T extends MenuStep>(step: T, resume: ResumeWrite | undefined): T & { resume?: ResumeWrite } {
  return resume ? { ...step, resume } : step;
}

/** Applies one input to the session (its consumed history unchanged). Never throws for bad input. */
export function applyInput(session: UssdSession, rawInput: string, deps: MenuDeps): Maybe<MenuStep> {
  return andThen(serviceOf(session, deps), (service) => apply(session, rawInput, service, deps, session.history));
}

/**
 * One gateway request against the session it belongs to (undefined for a new dial): a retry gets the last screen
 * again; otherwise the input is applied. Expiry is the caller's business: pass only a live session.
 */
export function answer(
  existing: UssdSession | undefined,
  dial: UssdDial,
  deps: MenuDeps,
): Maybe<MenuStep & { retry: boolean; unknownCode?: boolean; resume?: ResumeWrite }> {
  if (!existing) return andThen(welcome(dial, deps), (step) => ({ ...step, retry: false }));
  return andThen(serviceOf(existing, deps), (service) =>
    andThen(continueSession(existing, dial, service, deps), (step) =>
      step.retry || !service.resume
        ? step
        : withResume(step, resumeAfter(service, existing, step.session, step.ended, false)),
    ),
  );
}

/**
 * The version a session is pinned to (sessions from before services were data run the built-in one); when this
 * thread no longer knows it and cannot read it, the current version of the same service.
 */
function serviceOf(session: UssdSession, deps: MenuDeps): Maybe<CompiledService> {
  const catalog = catalogOf(deps);
  const id = session.serviceId ?? 'builtin';
  const known = session.serviceVersion === undefined ? undefined : catalog.version(`${id}@${session.serviceVersion}`);
  if (known) return known;
  const fallback = () => catalog.current().find((service) => service.id === id) ?? builtinService();
  if (session.serviceVersion === undefined || !deps.readVersion) return fallback();
  return andThen(deps.readVersion(`${id}@${session.serviceVersion}`), (read) => {
    if (!read) return fallback();
    catalog.remember(read);
    return read;
  });
}
