// Thread: any (wherever a NATS connection is)
// Waiting out the passing states of a JetStream cluster (a leader
// being elected, peers catching up after a start or a death) before a request counts as failed. The record store,
// the journal's stream and the oracle's runs stream open and read through these.
import type { JetStreamManager } from '@nats-io/jetstream';
import { isJetStreamNotNow } from './out-of-reach.js';

/** How long a bucket's creation, a watch's start or a listing waits for the JetStream cluster to serve it. */
export const PASSING_WAIT_MS = 45_000;

/**
 * Runs a JetStream request that meets passing states right after servers start or one dies: a new replicated
 * stream is placed only on peers the meta leader sees current ("no suitable peers for placement" while they catch
 * up), requests time out while a new meta or stream leader is elected (the old one's server just died), and a
 * fetch from a consumer just made can meet "no responders" (503) until its leader answers. So it is tried again
 * (backing off to 1 s) for PASSING_WAIT_MS; any other failure, or one past that, is thrown.
 */
export async function whilePassing<R>(request: () => Promise<R>): Promise<R> {
  const started = Date.now();
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 1_000)) {
    try {
      return await request();
    } catch (error) {
      // JetStream's "not now" too: a server just back from a pause or a partition refuses to host a new reader
      // while it catches up.
      const passing =
        /no suitable peers for placement|timeout|no responders/i.test((error as Error).message) ||
        (error as { code?: unknown }).code === 503 ||
        isJetStreamNotNow(error);
      if (!passing || Date.now() - started > PASSING_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** How long opening a bucket or journal waits for its new stream to elect a leader (see `untilStreamLed`). */
const LEADER_WAIT_MS = 10_000;

/**
 * Resolves once `stream` has a leader, or after LEADER_WAIT_MS (the writes' own retries take it from there). A
 * stream another node created a moment ago may still be electing one: a write sent meanwhile can go unanswered until
 * its request timeout (5 s), which every node but the creator met when nodes started together on a new deployment.
 */
export async function untilStreamLed(jsm: JetStreamManager, stream: string): Promise<void> {
  const started = Date.now();
  for (let delayMs = 20; Date.now() - started < LEADER_WAIT_MS; delayMs = Math.min(delayMs * 2, 250)) {
    const info = await jsm.streams.info(stream).catch(() => undefined);
    // Unclustered (one server): no election.
    if (info && (!info.cluster || info.cluster.leader)) return;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}
