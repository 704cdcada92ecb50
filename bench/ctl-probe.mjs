// bench:ctl's probe in the router's process (node --import): the event loop's delay, the
// collector's pauses, and when each control request came in and went out (the control server's
// `cogmesh:control:request` channel). Over the IPC channel: "start" resets (and says "started"),
// "report" answers.
import { subscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

const epoch = (ms) => performance.timeOrigin + ms;
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let requests = [];
let gc = { count: 0, ms: 0, maxMs: 0 };
subscribe('cogmesh:control:request', (t) => {
  requests.push([epoch(t.receivedMs), epoch(t.repliedMs), epoch(t.sentMs)]);
});
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.count++;
    gc.ms += e.duration;
    gc.maxMs = Math.max(gc.maxMs, e.duration);
  }
}).observe({ entryTypes: ['gc'] });
process.on('message', (m) => {
  if (m === 'start') {
    delay.reset();
    requests = [];
    gc = { count: 0, ms: 0, maxMs: 0 };
    process.send?.('started');
  } else if (m === 'report') {
    const ms = (ns) => ns / 1e6;
    process.send?.({
      loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      gc,
      requests,
    });
  }
});
// The probe never keeps the router running (a listener refs the channel: unref after).
process.channel?.unref();
