// Thread: main
// Weighted random choice (USSD paths, the mix of scenarios).

export function weightedPicker<T>(items: readonly T[], weight: (item: T) => number): () => T {
  const cumulative: number[] = [];
  let total = 0;
  for (const item of items) cumulative.push((total += weight(item)));
  if (!(total > 0)) throw new Error('weights must add up to more than 0');
  return () => {
    const r = Math.random() * total;
    let i = 0;
    while (cumulative[i] <= r) i++;
    return items[i];
  };
}

export const sleep = (ms: number) =>
  ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve();

/** A think time drawn uniformly from [min, max] ms. */
export const thinkTime = ([min, max]: readonly [number, number]) => min + Math.random() * (max - min);
