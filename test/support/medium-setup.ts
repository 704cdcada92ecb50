import { DEFAULT_MEDIUM_PARAMS, phy80211b } from '../../radio/medium/index.js';
import type { MediumSetup } from '../../radio/medium/server.js';

/** A medium process's setup for tests: 11 orthogonal channels, no PN anywhere, 802.11b at 2 Mbps. */
export const MEDIUM_SETUP: MediumSetup = {
  channels: 11,
  orthogonal: true,
  band: { noiseFigureDb: 6, pn: [], phases: [], repeat: true },
  bandSeed: 7,
  controlChannelPn: false,
  medium: { ...DEFAULT_MEDIUM_PARAMS },
  phy: phy80211b(2e6),
};
