import { err, ok, type Result } from './result.js';

/**
 * JSON text as cogmesh reads it from files and sockets: where a syntax error
 * is (JSON.parse's message on Node 20 has no line and column, and quotes the
 * text around it, which may hold a secret), how deep a document from outside
 * may nest, and a value shown in a message within a bound.
 */

/** A JSON syntax error: where, and what was expected there. */
export interface JsonSyntaxError {
  /** Offset in the text (UTF-16 code units). */
  offset: number;
  line: number;
  column: number;
  message: string;
  /** Whether it is inside a string: the text around it is a string's content, which an error must not quote. */
  inString: boolean;
}

/**
 * How deep a JSON document from outside (a control request, a recording's
 * metadata) may nest objects and arrays. JSON.parse itself takes any depth,
 * but what walks the value afterwards recurses (JSON.stringify, cloning,
 * comparing): some 4,000 levels overflow the stack. No document cogmesh
 * reads needs a tenth of this limit (a node configuration nests 8 deep).
 */
export const MAX_JSON_DEPTH = 64;

/** Why text from outside was not taken as JSON: not JSON, or nested too deep; said without quoting the text. */
export interface JsonRefusal {
  kind: 'syntax' | 'depth';
  /** e.g. `expected ',' or '}' but found "x" at line 3, column 7`, `objects and arrays nested deeper than 64 levels at line 1, column 72`. */
  message: string;
}

/**
 * The offset in `text` of the first `[` or `{` that opens a level deeper
 * than `maxDepth`, or undefined: one pass, no recursion, strings skipped.
 * It stops there, so a request of a million `[` costs 65 steps.
 */
export function nestingBeyond(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // the escaped character is skipped with its backslash
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

/**
 * JSON text from outside as a value: refused (never thrown) when it nests
 * deeper than `maxDepth` (checked first, before JSON.parse spends time on
 * it) or is not JSON, with a message that says where and quotes nothing.
 */
export function parseJsonText(text: string, maxDepth = MAX_JSON_DEPTH): Result<unknown, JsonRefusal> {
  const deep = nestingBeyond(text, maxDepth);
  if (deep !== undefined) {
    const { line, column } = lineColumn(text, deep);
    return err({ kind: 'depth', message: `objects and arrays nested deeper than ${maxDepth} levels at line ${line}, column ${column}` });
  }
  try {
    return ok(JSON.parse(text) as unknown);
  } catch {
    // JSON.parse's own message quotes the text around the error.
    return err({ kind: 'syntax', message: jsonSyntaxErrorText(text) });
  }
}

/**
 * A JSON value in at most `maxChars` characters, for a message: JSON text,
 * cut with `...` when longer. It stops writing once past the bound, so
 * neither a long value nor a deep one costs more than that (a nesting
 * level writes at least one character, so the recursion is as shallow).
 */
export function briefJson(v: unknown, maxChars = 60): string {
  let out = '';
  const emit = (s: string): boolean => {
    out += s;
    return out.length <= maxChars;
  };
  const walk = (x: unknown): boolean => {
    if (Array.isArray(x)) {
      if (!emit('[')) return false;
      for (let i = 0; i < x.length; i++) if ((i > 0 && !emit(',')) || !walk(x[i] ?? null)) return false;
      return emit(']');
    }
    if (typeof x === 'object' && x !== null) {
      if (!emit('{')) return false;
      let first = true;
      for (const [k, val] of Object.entries(x)) {
        if (val === undefined) continue;
        if ((!first && !emit(',')) || !emit(`${JSON.stringify(k.slice(0, maxChars))}:`) || !walk(val)) return false;
        first = false;
      }
      return emit('}');
    }
    if (typeof x === 'string') {
      if (x.length <= maxChars) return emit(JSON.stringify(x));
      emit(JSON.stringify(x.slice(0, maxChars)));
      return false;
    }
    // JSON.stringify throws on a BigInt (a value handed over in code, never one read from JSON text).
    if (typeof x === 'bigint') return emit(`${x}n`);
    return emit(JSON.stringify(x) ?? String(x));
  };
  return walk(v) ? out : `${out.slice(0, Math.max(0, maxChars - 3))}...`;
}

interface SyntaxProblem {
  offset: number;
  message: string;
  inString: boolean;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * The first JSON syntax error in `text` (RFC 8259), found iteratively so that
 * deep nesting cannot overflow the stack; undefined for valid JSON.
 */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const p = findSyntaxProblem(text);
  return p && { ...p, ...lineColumn(text, p.offset) };
}

/**
 * Why `text` is not JSON, and where (`expected ',' or '}' but found "x" at
 * line 3, column 7`), quoting none of it; for text JSON.parse refused.
 */
export function jsonSyntaxErrorText(text: string): string {
  const e = jsonSyntaxError(text);
  return e ? `${e.message} at line ${e.line}, column ${e.column}` : 'a syntax error';
}

/**
 * A short piece of `text` at a syntax error, for a message: at most 20
 * characters of its line, and never a string's content (a string may be a
 * secret): a problem inside a string, or the text from a string's opening
 * quote on, is left out.
 */
export function syntaxErrorExcerpt(text: string, e: JsonSyntaxError): string {
  if (e.inString) return '(inside a string)';
  const line = text.slice(e.offset).split(/\r?\n/, 1)[0]!.slice(0, 20);
  const quote = line.indexOf('"');
  const shown = quote < 0 ? line : `${line.slice(0, quote + 1)}...`;
  return shown !== '' ? shown : e.offset >= text.length ? '(end of file)' : '(end of line)';
}

function findSyntaxProblem(text: string): SyntaxProblem | undefined {
  const n = text.length;
  let i = 0;
  const stack: Array<'{' | '['> = [];
  const fail = (message: string, at = i, inString = false): SyntaxProblem => ({ offset: at, message, inString });
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const str = (): SyntaxProblem | undefined => {
    const start = i;
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('a control character (such as a line break) inside a string', i, true);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('an invalid \\u escape in a string', i, true);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
          i += 2;
        } else {
          return fail('an invalid escape in a string', i, true);
        }
      } else {
        i++;
      }
    }
    return fail('a string that is never closed', start, true);
  };
  const scalar = (): SyntaxProblem | undefined => {
    const c = text[i];
    if (c === '"') return str();
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return undefined;
      }
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (c !== undefined && /[-0-9]/.test(c) && m) {
      i += m[0].length;
      return undefined;
    }
    return fail(c === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(c)} where a value was expected`);
  };

  // Each turn parses one value (opening a container counts as its start), then the punctuation after it.
  ws();
  for (;;) {
    if (i >= n) return fail('unexpected end of input');
    const c = text[i];
    let closedEmpty = false;
    if (c === '{' || c === '[') {
      i++;
      ws();
      const close = c === '{' ? '}' : ']';
      if (text[i] === close) {
        i++;
        closedEmpty = true;
      } else {
        stack.push(c);
        if (c === '{') {
          const p = key();
          if (p) return p;
        }
        continue;
      }
    }
    if (!closedEmpty) {
      const p = scalar();
      if (p) return p;
    }
    // After a complete value: close containers or move to the next item.
    for (;;) {
      ws();
      const top = stack[stack.length - 1];
      if (top === undefined) return i < n ? fail('unexpected text after the end of the JSON document') : undefined;
      const close = top === '{' ? '}' : ']';
      if (text[i] === ',') {
        i++;
        ws();
        if (top === '{') {
          const p = key();
          if (p) return p;
        }
        break;
      }
      if (text[i] === close) {
        i++;
        stack.pop();
        continue;
      }
      return fail(i >= n ? 'unexpected end of input' : `expected ',' or '${close}' but found ${JSON.stringify(text[i])}`);
    }
    ws();
  }

  function key(): SyntaxProblem | undefined {
    if (text[i] !== '"') return fail(i >= n ? 'unexpected end of input' : `expected a field name in double quotes but found ${JSON.stringify(text[i])}`);
    const p = str();
    if (p) return p;
    ws();
    if (text[i] !== ':') return fail(i >= n ? 'unexpected end of input' : `expected ':' after the field name but found ${JSON.stringify(text[i])}`);
    i++;
    ws();
    return undefined;
  }
}
