// The graph: LangGraph's MessagesAnnotation and one node, a stand-in for a model call, that
// answers from what the conversation holds so far (so a restart that lost the history
// would show in its answers).
import { AIMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';

/** The compiled support graph on `checkpointer`. */
export function supportGraph(checkpointer) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', ({ messages }) => {
      const asked = messages.filter((m) => m.getType() === 'human').map((m) => m.content);
      return { messages: [new AIMessage(`You have asked: ${asked.join(' / ')}`)] };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer });
}
