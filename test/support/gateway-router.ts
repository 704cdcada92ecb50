import { join } from 'node:path';
import { MediumServer } from '../../radio/medium/server.js';
import { defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { ControlClient } from '../../src/control/client.js';
import { ControlServer } from '../../src/control/server.js';
import type { Logger } from '../../src/core/log.js';
import { MeshNode } from '../../src/daemon/mesh.js';
import type { GatewayConfig } from '../../src/gateway/role.js';
import { MEDIUM_SETUP } from './medium-setup.js';

/** A router that runs: its medium, the node with the gateway role, its control API and a client of it. */
export interface GatewayRouter {
  /** The node's configuration as started. */
  cfg: NodeConfig;
  node: MeshNode;
  client: ControlClient;
  /** Stops everything it started, the last first. */
  stop(): Promise<void>;
}

/**
 * Router 0 on its own medium (ipc endpoints in `dir`) with the gateway role
 * for these clients (the rest of the section as defaults, or as `more`
 * gives it) and its control API on `ipc://dir/ctl`.
 */
export async function startGatewayRouter(
  dir: string,
  clients: GatewayConfig['clients'],
  log: Logger,
  more: Partial<GatewayConfig> = {},
): Promise<GatewayRouter> {
  const medium = new MediumServer(MEDIUM_SETUP, { endpoint: `ipc://${join(dir, 'medium')}`, log });
  await medium.start();
  const cfg = defaultNodeConfig(0);
  cfg.sim.medium.endpoint = `ipc://${join(dir, 'medium')}`;
  cfg.gateway = { ...cfg.gateway, enabled: true, clients, ...more };
  const node = await MeshNode.start(cfg, log);
  const server = new ControlServer(
    node,
    { endpoint: `ipc://${join(dir, 'ctl')}`, telemetry: '', telemetryPeriodMs: 1000, curve: { publicKey: '', secretKey: '', allow: [] } },
    log,
  );
  await server.start();
  const client = new ControlClient(`ipc://${join(dir, 'ctl')}`);
  return {
    cfg,
    node,
    client,
    stop: async () => {
      client.close();
      await server.stop();
      await node.stop();
      await medium.stop();
    },
  };
}
