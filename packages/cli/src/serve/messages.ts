// Stored messages are opaque JSON: core's `Message`, provider shapes (OpenAI chat and
// Responses items, Anthropic, Gemini), the AI SDK's `UIMessage` (`parts`) and Mastra's
// stored messages (`content.parts`). The viewer reads each into one neutral list of
// blocks, so rendering knows a single shape; anything it does not recognise is kept as
// JSON, never dropped.

/** Where an image's bytes are: inside the message (base64) or at a URL. */
export type ImageSource =
  | { kind: 'inline'; base64: string; mediaType: string | undefined }
  | { kind: 'url'; url: string };

/** A tool's answer: its output as blocks, and whether the tool reported an error. */
export interface ToolOutcome {
  output: Block[];
  isError: boolean;
}

/** One piece of a message, as the viewer shows it. */
export type Block =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  /** `image` numbers the message's images in reading order (the image route's index). */
  | { kind: 'image'; image: number; source: ImageSource }
  | { kind: 'file'; name: string; mediaType: string; url: string | undefined }
  | { kind: 'link'; url: string; title: string }
  | {
      kind: 'tool-call';
      id: string | undefined;
      name: string;
      input: unknown;
      /** Set when the call and its result are stored together (AI SDK, Mastra). */
      result: ToolOutcome | undefined;
    }
  | {
      kind: 'tool-result';
      callId: string | undefined;
      name: string | undefined;
      outcome: ToolOutcome;
    }
  | { kind: 'data'; label: string; value: unknown };

/** A message read for display: who spoke and what it holds. */
export interface ViewMessage {
  role: string;
  name: string | undefined;
  blocks: Block[];
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Tool arguments sent as a JSON string (OpenAI) are shown as the value they encode. */
function decodeArguments(value: unknown): unknown {
  if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** Numbers images across one message in reading order. */
interface ReadState {
  images: number;
}

function dataUrlSource(url: string): ImageSource | undefined {
  const m = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/is.exec(url);
  return m ? { kind: 'inline', base64: m[2] ?? '', mediaType: m[1] || undefined } : undefined;
}

/** An image source from a URL or base64 text (the AI SDK's `image` field holds either). */
function sourceOf(value: string, mediaType: string | undefined): ImageSource {
  if (/^data:/i.test(value)) return dataUrlSource(value) ?? { kind: 'url', url: value };
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) return { kind: 'url', url: value };
  return { kind: 'inline', base64: value, mediaType };
}

function imageBlock(state: ReadState, source: ImageSource): Block {
  return { kind: 'image', image: state.images++, source };
}

function mediaTypeOf(part: Obj): string | undefined {
  return str(part.mediaType) ?? str(part.mimeType) ?? str(part.mime_type) ?? str(part.media_type);
}

/** An image part in any of its shapes, or undefined when it holds no image. */
function imagePart(part: Obj, state: ReadState): Block | undefined {
  const mediaType = mediaTypeOf(part);
  const source = isObj(part.source) ? part.source : undefined;
  if (source && str(source.data) !== undefined) {
    return imageBlock(state, {
      kind: 'inline',
      base64: source.data as string,
      mediaType: mediaTypeOf(source),
    });
  }
  if (source && str(source.url) !== undefined) {
    return imageBlock(state, { kind: 'url', url: source.url as string });
  }
  const imageUrl = isObj(part.image_url) ? str(part.image_url.url) : str(part.image_url);
  const text = str(part.data) ?? str(part.url) ?? str(part.image) ?? imageUrl;
  return text === undefined ? undefined : imageBlock(state, sourceOf(text, mediaType));
}

function filePart(part: Obj, state: ReadState): Block {
  const nested = isObj(part.file) ? part.file : part;
  const mediaType = mediaTypeOf(nested) ?? 'application/octet-stream';
  const data = str(nested.data) ?? str(nested.file_data);
  const url = str(nested.url);
  if (mediaType.startsWith('image/') && (data ?? url) !== undefined) {
    return imageBlock(state, sourceOf((data ?? url) as string, mediaType));
  }
  const name = str(nested.filename) ?? str(nested.name) ?? '(file)';
  return { kind: 'file', name, mediaType, url };
}

/** An AI SDK tool-result `output` (`{type: 'text' | 'json' | 'error-text' …, value}`). */
function outcomeOf(value: unknown, state: ReadState, isError = false): ToolOutcome {
  if (isObj(value) && typeof value.type === 'string' && 'value' in value) {
    const error = isError || value.type.startsWith('error');
    return { output: contentBlocks(value.value, state, 'output'), isError: error };
  }
  return { output: contentBlocks(value, state, 'output'), isError };
}

function toolCallBlock(
  id: unknown,
  name: unknown,
  input: unknown,
  result: ToolOutcome | undefined,
): Block {
  return {
    kind: 'tool-call',
    id: str(id),
    name: str(name) ?? '(tool)',
    input: decodeArguments(input),
    result,
  };
}

/** A UI tool part (`tool-<name>`, `dynamic-tool`) or Mastra's `tool-invocation`. */
function uiToolPart(part: Obj, state: ReadState): Block {
  const inv = isObj(part.toolInvocation) ? part.toolInvocation : part;
  const name = str(inv.toolName) ?? (str(part.type) ?? 'tool-').replace(/^tool-/, '');
  let result: ToolOutcome | undefined;
  if (str(inv.errorText) !== undefined) {
    result = { output: [{ kind: 'text', text: inv.errorText as string }], isError: true };
  } else if (inv.output !== undefined) result = outcomeOf(inv.output, state);
  else if (inv.result !== undefined) result = outcomeOf(inv.result, state);
  return toolCallBlock(inv.toolCallId, name, inv.input ?? inv.args, result);
}

/** Gemini parts carry no `type`: a text, a function call or response, or inline data. */
function untypedPart(part: Obj, state: ReadState): Block[] | undefined {
  if (str(part.text) !== undefined) {
    return [{ kind: part.thought === true ? 'reasoning' : 'text', text: part.text as string }];
  }
  const call = isObj(part.functionCall) ? part.functionCall : undefined;
  if (call) return [toolCallBlock(call.id, call.name, call.args, undefined)];
  const response = isObj(part.functionResponse) ? part.functionResponse : undefined;
  if (response) {
    const outcome = outcomeOf(response.response, state);
    return [{ kind: 'tool-result', callId: str(response.id), name: str(response.name), outcome }];
  }
  const inline = isObj(part.inlineData) ? part.inlineData : undefined;
  if (inline && str(inline.data) !== undefined) {
    return [filePart({ mediaType: mediaTypeOf(inline), data: inline.data }, state)];
  }
  return undefined;
}

/** The blocks of one content part. */
function partBlocks(part: unknown, state: ReadState): Block[] {
  if (typeof part === 'string') return part === '' ? [] : [{ kind: 'text', text: part }];
  if (!isObj(part)) return [{ kind: 'data', label: 'part', value: part }];
  const type = str(part.type);
  switch (type) {
    case undefined:
      return untypedPart(part, state) ?? [{ kind: 'data', label: 'part', value: part }];
    case 'text':
    case 'input_text':
    case 'output_text':
      return partBlocks(str(part.text) ?? '', state);
    case 'reasoning':
    case 'thinking':
    case 'redacted_thinking': {
      const text = str(part.text) ?? str(part.reasoning) ?? str(part.thinking) ?? '[redacted]';
      return [{ kind: 'reasoning', text }];
    }
    case 'image':
    case 'image_url':
    case 'input_image':
      return [imagePart(part, state) ?? { kind: 'data', label: type, value: part }];
    case 'file':
    case 'input_file':
      return [filePart(part, state)];
    case 'tool_use':
    case 'server_tool_use':
      return [toolCallBlock(part.id, part.name, part.input, undefined)];
    case 'tool-call':
      return [toolCallBlock(part.toolCallId, part.toolName, part.input ?? part.args, undefined)];
    case 'tool_result':
    case 'tool-result': {
      const callId = str(part.tool_use_id) ?? str(part.toolCallId);
      const outcome = outcomeOf(
        part.content ?? part.output ?? part.result,
        state,
        part.is_error === true || part.isError === true,
      );
      return [{ kind: 'tool-result', callId, name: str(part.toolName), outcome }];
    }
    case 'source-url':
      return [{ kind: 'link', url: str(part.url) ?? '', title: str(part.title) ?? '' }];
    case 'step-start':
      return [];
    default:
      if (type === 'tool-invocation' || type === 'dynamic-tool' || type.startsWith('tool-')) {
        return [uiToolPart(part, state)];
      }
      return [{ kind: 'data', label: type, value: part }];
  }
}

/** The blocks of a `content` value: a string, parts, or Mastra's `{parts}` object. */
function contentBlocks(content: unknown, state: ReadState, label = 'content'): Block[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }];
  if (Array.isArray(content)) return content.flatMap((p) => partBlocks(p, state));
  if (isObj(content) && Array.isArray(content.parts)) {
    return content.parts.flatMap((p) => partBlocks(p, state));
  }
  if (isObj(content) && typeof content.content === 'string') {
    return [{ kind: 'text', text: content.content }];
  }
  return [{ kind: 'data', label, value: content }];
}

/** Tool calls listed beside the content: core's `toolCalls`, OpenAI's `tool_calls`. */
function listedToolCalls(m: Obj): Block[] {
  const calls: Block[] = [];
  for (const call of Array.isArray(m.toolCalls) ? m.toolCalls : []) {
    if (isObj(call)) calls.push(toolCallBlock(call.id, call.name, call.arguments, undefined));
  }
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    if (!isObj(call)) continue;
    const fn = isObj(call.function) ? call.function : call;
    calls.push(toolCallBlock(call.id, fn.name, fn.arguments, undefined));
  }
  if (isObj(m.function_call)) {
    calls.push(
      toolCallBlock(undefined, m.function_call.name, m.function_call.arguments, undefined),
    );
  }
  return calls;
}

/** OpenAI Responses / Agents SDK items that are not chat messages (`type` without `role`). */
function itemBlocks(m: Obj, state: ReadState): { role: string; blocks: Block[] } | undefined {
  const type = str(m.type);
  const callId = m.callId ?? m.call_id;
  if (type === 'function_call' || type === 'hosted_tool_call' || type === 'computer_call') {
    return {
      role: 'assistant',
      blocks: [toolCallBlock(callId ?? m.id, m.name, m.arguments ?? m.action, undefined)],
    };
  }
  if (type === 'function_call_result' || type === 'function_call_output') {
    const outcome = outcomeOf(m.output, state);
    return {
      role: 'tool',
      blocks: [{ kind: 'tool-result', callId: str(callId), name: str(m.name), outcome }],
    };
  }
  if (type === 'reasoning' && m.role === undefined) {
    const parts = [
      ...(Array.isArray(m.content) ? m.content : []),
      ...(Array.isArray(m.summary) ? m.summary : []),
    ];
    const text = parts.map((p) => (isObj(p) ? (str(p.text) ?? '') : '')).join('\n');
    return { role: 'assistant', blocks: [{ kind: 'reasoning', text }] };
  }
  return undefined;
}

/**
 * Reads any stored message for display. Never throws: a value of no known shape becomes
 * one `data` block holding it.
 */
export function readMessage(message: unknown): ViewMessage {
  const state: ReadState = { images: 0 };
  if (typeof message === 'string')
    return { role: 'message', name: undefined, blocks: partBlocks(message, state) };
  if (!isObj(message)) {
    return {
      role: 'message',
      name: undefined,
      blocks: [{ kind: 'data', label: 'message', value: message }],
    };
  }
  const name = str(message.name);
  const item = itemBlocks(message, state);
  if (item) return { role: item.role, name, blocks: item.blocks };
  const role = str(message.role) ?? str(message.type) ?? 'message';
  const callId = str(message.toolCallId) ?? str(message.tool_call_id);
  let blocks: Block[];
  if (role === 'tool' && callId !== undefined) {
    const outcome = outcomeOf(message.content ?? message.output, state);
    blocks = [{ kind: 'tool-result', callId, name, outcome }];
  } else {
    blocks = contentBlocks(message.content, state);
    if (Array.isArray(message.parts))
      blocks.push(...message.parts.flatMap((p) => partBlocks(p, state)));
    if (blocks.length === 0 && typeof message.text === 'string') {
      blocks.push(...partBlocks(message.text, state));
    }
    blocks.push(...listedToolCalls(message));
  }
  if (blocks.length === 0) blocks.push({ kind: 'data', label: 'message', value: message });
  return { role, name, blocks };
}

/** The image numbered `index` in `message` (as `readMessage` numbers them), if any. */
export function imageOf(message: unknown, index: number): ImageSource | undefined {
  const found: ImageSource[] = [];
  const visit = (blocks: readonly Block[]) => {
    for (const b of blocks) {
      if (b.kind === 'image') found[b.image] = b.source;
      else if (b.kind === 'tool-call' && b.result) visit(b.result.output);
      else if (b.kind === 'tool-result') visit(b.outcome.output);
    }
  };
  visit(readMessage(message).blocks);
  return found[index];
}
