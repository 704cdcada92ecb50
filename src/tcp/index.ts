export * from './cc/index.js';
export * from './connection.js';
export * from './stack.js';
export { RttEstimator } from './rtt.js';
export { Scoreboard } from './scoreboard.js';
