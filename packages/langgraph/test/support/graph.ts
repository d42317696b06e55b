// The graph the tests, the README and the benchmark use: LangGraph's MessagesAnnotation with
// one node that answers every invoke with two messages of about `size` characters each.
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

/** The compiled graph on `checkpointer`. */
export function chatGraph(checkpointer: BaseCheckpointSaver, size = 64) {
  let turn = 0;
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', () => {
      turn += 1;
      const text = `reply ${turn} `.padEnd(size, '.');
      return { messages: [new AIMessage(text), new AIMessage(`${text}!`)] };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer });
}

/** One user turn on `thread`. */
export function userTurn(text: string): { messages: HumanMessage[] } {
  return { messages: [new HumanMessage(text)] };
}
