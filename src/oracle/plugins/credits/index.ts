// Thread: actor host
// The credits plugin (CREDITS_ENABLED=true): every message costs CREDITS_PER_MESSAGE from a per-user
// balance that starts at CREDITS_INITIAL; an empty balance refuses the turn with 402 before the agent runs.
import type { OraclePlugin, PluginDeps } from '../types.js';
import { creditLedger, type CreditLedger } from './ledger.js';

export interface CreditsPlugin extends OraclePlugin {
  readonly ledger: CreditLedger;
}

export function creditsPlugin(deps: PluginDeps): CreditsPlugin {
  const ledger = creditLedger(deps.repositories.credits, {
    initial: deps.config.CREDITS_INITIAL,
    perMessage: deps.config.CREDITS_PER_MESSAGE,
  });
  return {
    name: 'credits',
    ledger,
    async beforeAgent(context) {
      // A turn taken over after its node died was charged when it first ran.
      if (context.recovery) return;
      await ledger.charge(context.userDid);
    },
  };
}
