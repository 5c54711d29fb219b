import { FinalError } from './failure';
import { ATTEMPT_HEADER, outcomeOf, RequeueMessage, retryHeaders, WAITS_HEADER } from './settle';

const message = (headers: Record<string, unknown> = {}) => ({ properties: { headers } }) as never;
const unavailable = (error: unknown) => error instanceof Error && error.message === 'database down';
const half = () => 0.5;

describe('What becomes of a failed message (pure rule)', () => {
  it('When the handler asks for its message back, then it is requeued as it is, whatever its attempt', () => {
    expect(outcomeOf(new RequeueMessage('stopping'), {}, message({ [ATTEMPT_HEADER]: 99 }))).toEqual({
      kind: 'requeue',
    });
  });

  it('When the failure is final (FinalError, isFinal, or a rejecting consumer), then it is dead-lettered on its first attempt', () => {
    expect(outcomeOf(new FinalError('bad'), {}, message())).toEqual({ kind: 'dead-letter', why: 'final' });
    expect(outcomeOf(new Error('x'), { isFinal: () => true }, message())).toEqual({
      kind: 'dead-letter',
      why: 'final',
    });
    expect(outcomeOf(new Error('x'), { onFailure: 'reject' }, message())).toEqual({
      kind: 'dead-letter',
      why: 'final',
    });
  });

  it('When a real failure meets the last attempt, then it is dead-lettered; before that it waits one step more each time', () => {
    const options = { retry: { maxAttempts: 3, delaysMs: [1_000, 4_000] } };
    expect(outcomeOf(new Error('x'), options, message(), half)).toEqual({
      kind: 'retry',
      unavailable: false,
      attempt: 1,
      waits: 0,
      delay: { stepMs: 1_000, expirationMs: 750 },
    });
    const second = outcomeOf(new Error('x'), options, message({ [ATTEMPT_HEADER]: 2 }), half);
    expect(second).toMatchObject({ kind: 'retry', attempt: 2, delay: { stepMs: 4_000 } });
    expect(outcomeOf(new Error('x'), options, message({ [ATTEMPT_HEADER]: 3 }))).toEqual({
      kind: 'dead-letter',
      why: 'last attempt',
    });
  });

  it('When a dependency is unavailable, then the attempt is kept and its own waits grow, past the last attempt too', () => {
    const options = { isUnavailable: unavailable, retry: { maxAttempts: 2, delaysMs: [1_000, 2_000, 8_000] } };
    const down = new Error('database down');
    expect(outcomeOf(down, options, message({ [ATTEMPT_HEADER]: 2 }), half)).toMatchObject({
      kind: 'retry',
      unavailable: true,
      attempt: 2,
      waits: 1,
      delay: { stepMs: 1_000 },
    });
    expect(outcomeOf(down, options, message({ [ATTEMPT_HEADER]: 2, [WAITS_HEADER]: 2 }), half)).toMatchObject({
      waits: 3,
      delay: { stepMs: 8_000 },
    });
    // A final failure is final even while the dependency looks down.
    expect(outcomeOf(down, { ...options, isFinal: () => true }, message())).toEqual({
      kind: 'dead-letter',
      why: 'final',
    });
  });

  it('When the headers are not positive integers, then the message counts as a first attempt with no waits', () => {
    for (const bad of [-3, 1.5, null, 'x', {}]) {
      expect(
        outcomeOf(new Error('x'), {}, message({ [ATTEMPT_HEADER]: bad, [WAITS_HEADER]: bad }), half),
      ).toMatchObject({
        attempt: 1,
        waits: 0,
      });
    }
  });

  it("When a retried message's headers are copied, then RabbitMQ's dead-lettering history is left out", () => {
    expect(
      retryHeaders(message({ 'x-death': [], 'x-first-death-queue': 'q', 'x-delivery-count': 3, keep: 'yes' })),
    ).toEqual({ keep: 'yes' });
  });
});
