import { workspaceSources } from './workspace';

/**
 * Protocols stay on well-kept parts (docs/decisions/parser-refusals.md, docs/decisions/gateway-on-node-http-and-undici.md):
 * no running code of ours writes an HTTP/1.1 status line or CRLF framing, reads Node's private HTTP
 * fields or modules, or reaches into amqplib's private files. Tests may craft raw bytes; running code may not.
 */

const RULES: { pattern: RegExp; problem: string }[] = [
  { pattern: /HTTP\/1\.[01] (\d|\$\{)/, problem: 'writes an HTTP/1.x status line' },
  { pattern: /\\r\\n/, problem: 'writes CRLF framing' },
  { pattern: /\._httpMessage\b|\._headerSent\b|\bparser\.execute\b/, problem: "reads node:http's private state" },
  { pattern: /['"](node:)?_http_\w+['"]|['"]internal\/http/, problem: "imports node:http's private modules" },
  { pattern: /['"]amqplib\/lib\//, problem: "reaches into amqplib's private files" },
];

const isTestCode = (file: string) => /\.test\.ts$|\.test-support\.ts$/.test(file);

export function protocolViolations(files: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (isTestCode(file)) continue;
    for (const rule of RULES) {
      if (rule.pattern.test(text)) found.push(`${file}: ${rule.problem}`);
    }
  }
  return found;
}

/** The running code of every package and service but @hub/testing (test code as a whole). */
function runningCode(): Map<string, string> {
  return new Map([...workspaceSources()].filter(([file]) => !file.startsWith('packages/testing/')));
}

describe('protocol code', () => {
  it('When the running code of the workspace is read, then none of it writes HTTP framing or reads private protocol internals', () => {
    const files = runningCode();
    expect(files.size).toBeGreaterThan(100);
    expect(protocolViolations(files)).toEqual([]);
  });

  it.each([
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template, as running code would hold it
    ['const head = `HTTP/1.1 ${status} ${title}`;', /status line/],
    ["socket.write('HTTP/1.1 400 Bad Request');", /status line/],
    ["lines.join('\\r\\n');", /CRLF/],
    ['const res = socket._httpMessage;', /private state/],
    ["import { HTTPParser } from '_http_common';", /private modules/],
    ["import Mux from 'amqplib/lib/mux';", /amqplib/],
  ])('When running code holds %j, then it is reported', (text, problem) => {
    expect(protocolViolations(new Map([['services/gateway/src/x.ts', text]]))).toEqual([
      expect.stringMatching(problem),
    ]);
  });

  it('When a test crafts raw bytes, then it passes', () => {
    expect(protocolViolations(new Map([['services/gateway/src/x.test.ts', "'GET / HTTP/1.1\\r\\n\\r\\n'"]]))).toEqual(
      [],
    );
  });
});
