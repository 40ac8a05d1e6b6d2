// @ixo/oracles-client-sdk 1.4.0's own React hooks, unchanged, under react-test-renderer in Node: its provider with
// a wallet whose delegation is minted for the test server, localStorage (its UCAN caches) kept in memory, and a
// fetch that reaches only the test server (its chain look-ups go to the chain-client test double instead,
// test/fixtures/oracles-chain-client-stub), and `window.crypto`. `mountHook` renders one hook and lets a test wait
// for a state of it.
import { OraclesProvider } from '@ixo/oracles-client-sdk';
import { createElement, type ReactNode } from 'react';
import TestRenderer, { act, type ReactTestRenderer } from 'react-test-renderer';
import type { SdkUser } from './sdk-client.js';

const memory = new Map<string, string>();
Object.assign(globalThis, {
  // Updates come from sockets and fetches, not from inside act(): React must not ask for act() around them.
  IS_REACT_ACT_ENVIRONMENT: false,
  // sendMessage names the user's message with window.crypto.randomUUID(); nothing else of `window` is read by the
  // chat hooks (only the live-call hooks, not used here, look for a browser).
  window: { crypto: globalThis.crypto },
  localStorage: {
    getItem: (key: string) => memory.get(key) ?? null,
    setItem: (key: string, value: string) => void memory.set(key, String(value)),
    removeItem: (key: string) => void memory.delete(key),
    clear: () => memory.clear(),
  },
});

/** The SDK's wallet and delegation callback for `user` (the SDK then sends `x-ucan-delegation` everywhere). */
function providerProps(user: SdkUser) {
  return {
    initialWallet: { did: user.did, address: '', matrix: { accessToken: '', homeServer: '' } },
    transactSignX: async () => undefined,
    createDelegation: async () => ({ serialized: user.delegation, expiresAt: Date.now() + 3_600_000 }),
  };
}

/** Calls the hook on every render and hands its answer out. */
function Probe({ useHook, rendered }: { useHook: () => unknown; rendered: (value: unknown) => void }): ReactNode {
  rendered(useHook());
  return null;
}

export interface MountedHook<R> {
  /** The hook's latest answer. */
  readonly current: R;
  /** Resolves with the first answer (from now on, or the current one) that `test` accepts; fails after `ms`. */
  until(test: (current: R) => boolean, what: string, ms?: number): Promise<R>;
  /** Calls `see` with every answer from now on (what the hook showed, render by render). */
  watch(see: (current: R) => void): void;
  unmount(): void;
}

/** Renders `useHook` inside the SDK's provider for `user`; unmounted at the end of the test. */
export function mountHook<R>(
  t: { teardown(fn: () => unknown): void },
  user: SdkUser,
  useHook: () => R,
): MountedHook<R> {
  let current: R | undefined;
  const waiters = new Set<() => void>();
  const rendered = (value: unknown) => {
    current = value as R;
    for (const wake of waiters) wake();
  };
  let renderer: ReactTestRenderer | undefined;
  act(() => {
    renderer = TestRenderer.create(
      createElement(OraclesProvider, providerProps(user) as never, createElement(Probe, { useHook, rendered })),
    );
  });
  const unmount = () => {
    if (!renderer) return;
    const mounted = renderer;
    renderer = undefined;
    act(() => mounted.unmount());
  };
  t.teardown(unmount);
  return {
    get current() {
      return current as R;
    },
    until(test, what, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (current === undefined || !test(current)) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(current);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the hook never showed ${what}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    watch(see) {
      waiters.add(() => see(current as R));
    },
    unmount,
  };
}

/** Keeps fetch to `base` (the SDK's chain look-ups must not leave the machine); every URL fetched is recorded. */
export function onlyTo(t: { teardown(fn: () => unknown): void }, base: string): string[] {
  const real = globalThis.fetch;
  const fetched: string[] = [];
  globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    fetched.push(url);
    if (!url.startsWith(base)) return Promise.reject(new TypeError(`fetch outside the test server: ${url}`));
    return real(input, init);
  };
  t.teardown(() => {
    globalThis.fetch = real;
  });
  return fetched;
}
