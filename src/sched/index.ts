export { ChannelScheduler, type ChannelSchedulerCounters } from './channel-scheduler.js';
export { PacketQueue } from './queue.js';
export type { ChannelSchedulerParams, DropReason, QueuedPacket, SchedAction } from './types.js';
