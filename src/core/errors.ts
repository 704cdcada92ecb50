import { briefJson } from './json.js';

/**
 * Error classes with stable codes. Expected outcomes (queue full, no route,
 * a channel with no measurement yet) are values, not exceptions; these are for
 * faults and refused input, and each carries a `code` that tests and the
 * control API match on instead of the message text.
 */
export class CogmeshError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Virtual time was asked to go back. */
export class ClockRegressionError extends CogmeshError {
  constructor(
    readonly nowUs: number,
    readonly requestedUs: number,
  ) {
    super('CORE_CLOCK_REGRESSION', `virtual clock cannot go back from ${nowUs} us to ${requestedUs} us`);
  }
}

/** A time or duration that is not a finite, non-negative integer of microseconds. */
export class InvalidTimeError extends CogmeshError {
  constructor(what: string, value: unknown) {
    super('CORE_INVALID_TIME', `${what} must be a non-negative integer number of microseconds, got ${String(value)}`);
  }
}

/** An argument outside its documented range (a programming or operator error, named precisely). */
export class RangeArgumentError extends CogmeshError {
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly expected: string,
  ) {
    super('CORE_OUT_OF_RANGE', `${field}: ${JSON.stringify(value)} is out of range, expected ${expected}`);
  }
}

/** One problem found in a configuration: the path of the field, the value found and what was expected. */
export interface ConfigIssue {
  /** JSON-pointer-like path, e.g. `/sensing/durationMs`. `/` is the document root. */
  path: string;
  value: unknown;
  expected: string;
}

/** A configuration (file, remote set, command-line override) refused whole. */
export class ConfigError extends CogmeshError {
  constructor(
    readonly issues: ConfigIssue[],
    readonly source = 'configuration',
  ) {
    super('CONFIG_INVALID', ConfigError.describe(issues, source));
  }

  static describe(issues: ConfigIssue[], source: string): string {
    const lines = issues.map((i) => `  ${i.path}: ${showValue(i.value)} — expected ${i.expected}`);
    return `${source} refused (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`;
  }
}

/** A command line that cannot be carried out as written. */
export class UsageError extends CogmeshError {
  constructor(message: string) {
    super('CLI_USAGE', message);
  }
}

/** A radio front-end fault: device missing, tuning refused, stream broken. */
export class FrontendError extends CogmeshError {
  constructor(code: `RADIO_${string}`, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A value as a problem shows it: JSON in at most 60 characters, whatever its size or depth. */
export function showValue(v: unknown): string {
  if (v === undefined) return '(missing)';
  // JSON has no NaN or infinity: it would show them as null, which is not what was given.
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return briefJson(v, 60);
}
