import type { EventEngine } from './engine.js';
import type { Micros } from './time.js';

/**
 * Runs an event engine up to `untilUs` while letting asynchronous drivers
 * keep up: after every event the pump yields to the event loop until all
 * promise continuations that event caused have run, so code written against
 * the asynchronous Frontend interface runs unchanged in virtual time and in
 * the same order every run. Nothing else may use Node timers meanwhile.
 */
export async function runVirtual(engine: EventEngine, untilUs: Micros): Promise<void> {
  for (;;) {
    await settle();
    const next = engine.nextAt();
    if (next === undefined || next > untilUs) break;
    engine.step();
  }
  engine.run(untilUs);
  await settle();
}

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
