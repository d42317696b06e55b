// The SDK's real runner with SessionKitSession, offline (ScriptedModel), with a tool and
// a handoff: a conversation whose second turn runs on another store instance over the
// same data (as after a restart) resumes with every item exactly once.
import {
  type AgentsError,
  MemorySession,
  OutputGuardrailTripwireTriggered,
  run,
} from '@openai/agents-core';
import { newSessionId } from '@sessionkit/core';
import { withLostReplies } from '@sessionkit/test-backends';
import { describe, expect, it } from 'vitest';
import { SessionKitSession } from '../src/index.js';
import {
  FIRST_QUESTION,
  FIRST_TURN_TYPES,
  FOLLOW_UP,
  guardedAgent,
  weatherAgents,
} from './support/conversation.js';
import { asStored } from './support/items.js';
import { describeOnBackends } from './support/per-backend.js';

/** Both turns on the SDK's MemorySession: what the runner stores when nothing restarts. */
async function referenceHistory(): Promise<unknown[]> {
  const session = new MemorySession();
  await run(weatherAgents('first').triage, FIRST_QUESTION, { session });
  const streamed = await run(weatherAgents('followUp').triage, FOLLOW_UP, {
    session,
    stream: true,
  });
  await streamed.completed;
  return asStored(await session.getItems());
}

describeOnBackends('the SDK runner', (ctx) => {
  it('resumes on another store instance with every item once (tool, handoff, streamed turn)', async () => {
    const sessionId = newSessionId();
    const first = weatherAgents('first');
    const result = await run(first.triage, FIRST_QUESTION, { session: ctx.session({ sessionId }) });
    expect(result.finalOutput).toBe('Rain in Oslo today, 9 °C.');
    expect(result.lastAgent?.name).toBe('Weather expert');
    first.model.assertComplete();
    const afterFirst = await ctx.store().loadMessages(sessionId);
    expect(afterFirst.map((item) => (item as { type: string }).type)).toEqual(FIRST_TURN_TYPES);

    // As a restarted process: new agents and model, another store instance, the same id.
    const followUp = weatherAgents('followUp');
    const resumed = new SessionKitSession({ store: await ctx.peer(), sessionId });
    const streamed = await run(followUp.triage, FOLLOW_UP, { session: resumed, stream: true });
    await streamed.completed;
    expect(streamed.finalOutput).toBe('Dry tomorrow.');
    followUp.model.assertComplete();

    // The model saw the stored conversation once, then the new question.
    const input = followUp.model.lastCall?.request.input;
    expect(asStored(input)).toEqual([
      ...afterFirst,
      { type: 'message', role: 'user', content: FOLLOW_UP },
    ]);
    const stored = await resumed.getItems();
    expect(stored).toHaveLength(FIRST_TURN_TYPES.length + 2);
    expect(stored).toEqual(await referenceHistory());
  });

  describe('with history transactions', () => {
    ctx.requiresHistoryWrites();

    it('a tripped output guardrail keeps the turn through a history transaction, as MemorySession does', async () => {
      const reference = new MemorySession();
      await expect(
        run(guardedAgent().agent, FIRST_QUESTION, { session: reference }),
      ).rejects.toThrow(OutputGuardrailTripwireTriggered);
      const session = ctx.session();
      const transactions: string[] = [];
      const apply = session.applyHistoryTransaction.bind(session);
      session.applyHistoryTransaction = async (args) => {
        transactions.push(args.transaction.type);
        return apply(args);
      };
      await expect(run(guardedAgent().agent, FIRST_QUESTION, { session })).rejects.toThrow(
        OutputGuardrailTripwireTriggered,
      );
      expect(transactions).toEqual(['append_items']);
      expect(await session.getItems()).toEqual(asStored(await reference.getItems()));
    });

    it('a transaction whose reply was lost, re-sent by the resumed run, lands once', async () => {
      const lossy = withLostReplies(ctx.store());
      const sessionId = newSessionId();
      const guarded = guardedAgent();
      lossy.loseNextReply();
      const tripped = await run(guarded.agent, FIRST_QUESTION, {
        session: new SessionKitSession({ store: lossy.store, sessionId }),
      }).catch((e: unknown) => e);
      expect(tripped).toBeInstanceOf(OutputGuardrailTripwireTriggered);
      expect(lossy.lost).toBe(1);
      const landed = await ctx.store().loadMessages(sessionId);
      expect(landed.map((item) => (item as { type: string }).type)).toEqual(
        FIRST_TURN_TYPES.slice(0, 3),
      );

      // The run resumed from its state (the SDK refuses to resume this state from its
      // serialised form), on another store instance: it re-sends the pending transaction.
      const state = (tripped as AgentsError).state;
      if (state === undefined) throw new Error('the tripwire error carries no run state');
      const resumed = new SessionKitSession({ store: await ctx.peer(), sessionId });
      const operationIds: string[] = [];
      const apply = resumed.applyHistoryTransaction.bind(resumed);
      resumed.applyHistoryTransaction = async (args) => {
        operationIds.push(args.operationId);
        return apply(args);
      };
      await expect(run(guarded.agent, state, { session: resumed })).rejects.toThrow(
        OutputGuardrailTripwireTriggered,
      );
      expect(operationIds).toHaveLength(1);
      expect(await ctx.store().loadMessages(sessionId)).toEqual(landed);
    });
  });
});
