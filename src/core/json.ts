/**
 * JSON text as cogmesh reads it from files and sockets: where a syntax error
 * is (JSON.parse's message on Node 20 has no line and column, and quotes the
 * text around it, which may hold a secret).
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
