// Thread: main
// The scenario a run uses: one of them, or a weighted mix whose every journey picks one.
import { chatScenario } from './chat.js';
import { gatewayScenario } from './gateway.js';
import { weightedPicker } from './pick.js';
import { runIteration, SCENARIOS, type Scenario, type ScenarioContext, type ScenarioName } from './types.js';
import { ussdScenario } from './ussd.js';
import { wsScenario } from './ws.js';

const FACTORIES: Record<ScenarioName, (ctx: ScenarioContext) => Scenario | Promise<Scenario>> = {
  ussd: ussdScenario,
  chat: chatScenario,
  ws: wsScenario,
  gateway: gatewayScenario,
};

export async function createScenario(ctx: ScenarioContext): Promise<Scenario> {
  const { scenario, mix } = ctx.options;
  if (scenario !== 'mix') return FACTORIES[scenario](ctx);
  const parts = await Promise.all(
    SCENARIOS.filter((name) => (mix[name] ?? 0) > 0).map(async (name) => ({
      weight: mix[name]!,
      scenario: await FACTORIES[name](ctx),
    })),
  );
  const pick = weightedPicker(parts, (p) => p.weight);
  return {
    name: 'mix',
    async iterate(scheduledAt) {
      // Counted under the chosen scenario's name as well as under "mix".
      if (!(await runIteration(pick().scenario, ctx.recorder(), scheduledAt))) throw new Error('journey failed');
    },
  };
}
