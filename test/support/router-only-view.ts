import type { NodeConfig } from '../../src/config/types.js';
import type { Logger } from '../../src/core/log.js';
import type { Micros } from '../../src/core/time.js';
import { LiveConfigView } from '../../src/daemon/live-view.js';
import type { MeshRouter } from '../../src/router/router.js';

/** The live-configuration side of a router daemon (MeshNode's), over a router in virtual time: a checked change goes to `MeshRouter.reconfigure` at once. */
export class RouterOnlyView extends LiveConfigView {
  readonly id: number;
  readonly name: string;
  protected readonly startedUs = 0;

  constructor(
    private readonly router: MeshRouter,
    private readonly engine: { now(): Micros },
    log: Logger,
  ) {
    super(router.config, log);
    this.id = router.config.node.id;
    this.name = router.config.node.name;
  }

  now(): Micros {
    return this.engine.now();
  }

  protected applyLive(next: NodeConfig, changed: string[]): void {
    this.router.reconfigure(next, changed, this.engine.now());
  }
}
