// The actor kinds every actor host can run, one per face that keeps sessions.
import type { ActorKind } from './runtime/actor-host.js';
import { chatActorKind } from './oracle/chat/actor.js';
import { ussdActorKind } from './ussd/actor/session-actor.js';

export const actorKinds: readonly ActorKind[] = [ussdActorKind, chatActorKind];
