import { waitFor } from '@hub/testing/src/wait';
import { type RawResponse, sendRaw } from '../http-client';
import { type Case, type CaseContext, casesOf } from './cases';
import { changedTables, type DatabaseFingerprints, type Fingerprint } from './fingerprint';
import { nonNull, type Operation } from './operations';

/** No answer may take longer than this. */
export const SLOW_MS = 5_000;

export interface SweepContext extends CaseContext {
  baseUrl: string;
  fingerprints: DatabaseFingerprints;
}

/** A hostile request that was accepted (2xx): not a failure by itself, listed in SWEEP_REPORT to read. */
export interface Accepted {
  operation: string;
  target: string;
  kind: string;
  input: string;
  status: number;
}

export interface Violation {
  operation: string;
  /** "query busca", "path id", "body permissoes.aplicativos.ler", "body" */
  target: string;
  kind: string;
  /** The start of the input, enough to recognise it. */
  input: string;
  status: number;
  /** What is wrong with the answer. */
  problem: string;
  seed: number;
}

/**
 * Kinds no route may accept, whatever the field: text that PostgreSQL cannot hold or that would be
 * stored changed (U+FFFD for a lone surrogate or a bad byte, null for 1e309), URLs that do not decode,
 * JSON that does not parse or is nested beyond any real document.
 */
const NEVER_ACCEPTED = new Set([
  'nul',
  'lone_surrogate',
  'invalid_utf8_bytes',
  'invalid_utf8',
  'invalid_percent',
  'malformed_json',
  'deep_array',
  'deep_object',
  'overflow_number',
]);

/** What is wrong with an answer to a hostile request, if anything. */
export function judge(
  response: RawResponse,
  c?: Pick<Case, 'kind' | 'target'>,
  operation?: Operation,
): string | undefined {
  if (c && response.status >= 200 && response.status < 400) {
    if (NEVER_ACCEPTED.has(c.kind)) return `accepted (${response.status}) a value it must refuse`;
    const strict = operation?.body && nonNull(operation.body).additionalProperties === false;
    if (strict && c.target === 'body' && (c.kind === 'unknown_field' || c.kind === 'proto_key'))
      return `accepted (${response.status}) a property its document does not allow`;
  }
  if (response.error) return `no answer (${response.error})`;
  // A throttled request never reached the service: it proves nothing, so it must not pass as a refusal.
  if (response.status === 429) return '429: the sweep was throttled and the service never saw the value';
  if (response.ms > SLOW_MS) return `slower than ${SLOW_MS} ms (${Math.round(response.ms)} ms)`;
  if (response.status >= 500) return `${response.status} ${codigoOf(response) ?? response.text.slice(0, 80)}`;
  if (response.status >= 400) {
    if (!response.contentType.startsWith('application/problem+json'))
      return `${response.status} not problem+json (${response.contentType || 'no content-type'})`;
    if (!codigoOf(response)) return `${response.status} problem+json without codigo`;
  }
  return undefined;
}

function codigoOf(response: RawResponse): string | undefined {
  try {
    const codigo = (JSON.parse(response.text) as { codigo?: unknown }).codigo;
    return typeof codigo === 'string' && codigo ? codigo : undefined;
  } catch {
    return undefined;
  }
}

const refused = (response: RawResponse) => response.status === 0 || response.status >= 400;

/**
 * Sends every case of an operation. Reads run a few at a time; a mutating operation runs one request
 * at a time between fingerprints of every table, so a refused request that changed anything is named.
 * After an accepted one the databases are let settle (outbox relays) before the next comparison.
 */
export async function sweepOperation(
  operation: Operation,
  context: SweepContext,
): Promise<{ violations: Violation[]; accepted: Accepted[] }> {
  const cases = casesOf(operation, context);
  const violations: Violation[] = [];
  const accepted: Accepted[] = [];
  const note = (c: Case, response: RawResponse) => {
    if (response.status >= 200 && response.status < 300)
      accepted.push({
        operation: operation.key,
        target: c.target,
        kind: c.kind,
        input: c.input,
        status: response.status,
      });
  };
  const record = (c: Case, response: RawResponse, problem: string) =>
    violations.push({
      operation: operation.key,
      target: c.target,
      kind: c.kind,
      input: c.input,
      status: response.status,
      problem,
      seed: c.seed,
    });

  if (!operation.mutating) {
    await inBatches(cases, 4, async (c) => {
      const response = await sendRaw(context.baseUrl, c.request);
      const problem = judge(response, c, operation);
      if (problem) record(c, response, problem);
      note(c, response);
    });
    return { violations, accepted };
  }

  let before = await settled(context.fingerprints);
  for (const c of cases) {
    const response = await sendRaw(context.baseUrl, c.request);
    const problem = judge(response, c, operation);
    if (problem) record(c, response, problem);
    note(c, response);
    if (refused(response)) {
      const after = await context.fingerprints.take();
      const changed = changedTables(before, after);
      if (changed.length) record(c, response, `refused (${response.status}) but changed ${changed.join(', ')}`);
      before = changed.length ? await settled(context.fingerprints) : after;
    } else {
      before = await settled(context.fingerprints);
    }
  }
  return { violations, accepted };
}

/**
 * A fingerprint once background writers are done: no outbox row waits for its relay, and two readings
 * in a row agree.
 */
async function settled(fingerprints: DatabaseFingerprints): Promise<Fingerprint> {
  let last = await fingerprints.take();
  return waitFor(
    async () => {
      if ((await fingerprints.pendingOutbox()) > 0) return undefined;
      const next = await fingerprints.take();
      const stable = changedTables(last, next).length === 0;
      last = next;
      return stable ? next : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 50, what: 'the databases to settle' },
  );
}

async function inBatches<T>(items: T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

/** Violations grouped by problem and kind, one line each with the places and one input. */
export function groupViolations(violations: Violation[]): string[] {
  const groups = new Map<string, Violation[]>();
  for (const v of violations) {
    const problem = v.problem.replace(/\(\d+ ms\)/, '').trim();
    const key = `${problem} · ${v.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, list]) => {
      const places = [...new Set(list.map((v) => `${v.operation} [${v.target}]`))];
      const shown = places.slice(0, 8).join('; ') + (places.length > 8 ? `; … ${places.length - 8} more` : '');
      return `${key} × ${list.length}: ${shown} — e.g. ${JSON.stringify(list[0]!.input)}`;
    });
}
