// Thread: main
// --find-capacity: runs the open loop at rising rates (start, start x factor, ...) until a step breaks the SLO,
// then bisects between the last rate that held and the first that broke (--refine times). The answer is the
// highest rate that held; every step tried is kept.

export interface StepVerdict {
  rate: number;
  held: boolean;
}

export interface CapacityPlan {
  startRate: number;
  factor: number;
  maxRate: number;
  refine: number;
}

/** Rates are rounded to keep the steps readable: whole numbers from 10/s up. */
export const roundRate = (rate: number) => (rate >= 10 ? Math.round(rate) : Math.round(rate * 100) / 100);

export async function searchCapacity<S extends StepVerdict>(
  plan: CapacityPlan,
  tryRate: (rate: number) => Promise<S>,
): Promise<{ highestHeld?: number; steps: S[] }> {
  const steps: S[] = [];
  let held: number | undefined;
  let broke: number | undefined;
  for (let rate = roundRate(plan.startRate); rate <= plan.maxRate; rate = roundRate(rate * plan.factor)) {
    const step = await tryRate(rate);
    steps.push(step);
    if (!step.held) {
      broke = rate;
      break;
    }
    held = rate;
  }
  if (broke !== undefined && held !== undefined) {
    let low = held;
    let high = broke;
    for (let i = 0; i < plan.refine; i++) {
      const mid = roundRate((low + high) / 2);
      if (mid <= low || mid >= high) break;
      const step = await tryRate(mid);
      steps.push(step);
      if (step.held) low = mid;
      else high = mid;
    }
    held = low;
  }
  return { highestHeld: held, steps };
}
