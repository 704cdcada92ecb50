import { Alarm } from '../core/alarm.js';
import type { Scheduler } from '../core/scheduler.js';
import type { Micros } from '../core/time.js';
import { WiredLinkDirection, type WiredLinkParams } from '../core/wired-link.js';

/** What one direction of the emulated WAN did: packets taken, delivered, dropped at its queue, and its longest queue. */
export interface WanDirectionCounters {
  sent: number;
  sentBytes: number;
  delivered: number;
  drops: number;
  maxQueuePackets: number;
}

/**
 * One direction of the WAN a router emulates on its LAN side (docs/ip.md):
 * the packets go through a wired link of the configured rate, one-way delay
 * and drop-tail queue (the simulator's own `WiredLinkDirection`), and come
 * out by an event at their arrival. This is netem's delay and TBF's rate in
 * the daemon: the kernel of the router PC needs neither.
 */
export class WanDirection {
  private readonly link: WiredLinkDirection<Uint8Array>;
  private readonly alarm: Alarm;

  constructor(
    params: WiredLinkParams,
    private readonly scheduler: Scheduler,
    private readonly deliver: (packet: Uint8Array, now: Micros) => void,
  ) {
    this.link = new WiredLinkDirection<Uint8Array>(params);
    this.alarm = new Alarm(scheduler);
  }

  /** Takes a copy of `packet` (the caller may reuse its buffer); false when the queue was full and it was dropped. */
  send(packet: Uint8Array, now: Micros): boolean {
    if (!this.link.send(packet.slice(), packet.length, now).ok) return false;
    this.alarm.set(this.link.nextDeadline(), this.arrive);
    return true;
  }

  get counters(): WanDirectionCounters {
    return { ...this.link.counters };
  }

  /** Packets queued and not yet on the wire. */
  queueLength(): number {
    return this.link.queueLength(this.scheduler.now());
  }

  /** Drops what is queued or on the way. */
  stop(): void {
    this.alarm.cancel();
  }

  private readonly arrive = (now: Micros): void => {
    for (const p of this.link.tick(now)) this.deliver(p, now);
    this.alarm.set(this.link.nextDeadline(), this.arrive);
  };
}

/** The WAN between a router's LAN and the mesh: one direction toward the mesh, one toward the LAN. */
export class Wan {
  readonly toMesh: WanDirection;
  readonly toLan: WanDirection;

  constructor(
    params: WiredLinkParams,
    scheduler: Scheduler,
    toMesh: (packet: Uint8Array, now: Micros) => void,
    toLan: (packet: Uint8Array, now: Micros) => void,
  ) {
    this.toMesh = new WanDirection(params, scheduler, toMesh);
    this.toLan = new WanDirection(params, scheduler, toLan);
  }

  get counters(): { toMesh: WanDirectionCounters; toLan: WanDirectionCounters } {
    return { toMesh: this.toMesh.counters, toLan: this.toLan.counters };
  }

  stop(): void {
    this.toMesh.stop();
    this.toLan.stop();
  }
}
