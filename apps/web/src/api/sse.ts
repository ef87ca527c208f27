/**
 * A small text/event-stream parser (the WHATWG "server-sent events" framing): events are blocks
 * of `field: value` lines ended by a blank line; `data` lines join with "\n"; lines starting with
 * ':' are comments; CR, LF and CRLF all end a line. Chunks may split anywhere, even inside a
 * CRLF or a multi-byte character (the stream reader decodes with `stream: true`).
 */
export type SseEvent = { event: string; data: string; id?: string };

export type SseParser = {
  /** Feeds decoded text; calls onEvent for every event completed by it. */
  push(chunk: string): void;
  /** The stream ended: an event without its closing blank line is dropped, as the spec says. */
  end(): void;
};

export function createSseParser(onEvent: (e: SseEvent) => void): SseParser {
  let buffer = '';
  let pendingCr = false;
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let hasData = false;

  const dispatch = () => {
    if (hasData) onEvent({ event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) });
    event = '';
    data = [];
    hasData = false;
  };

  const line = (text: string) => {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') {
      data.push(value);
      hasData = true;
    } else if (field === 'id' && !value.includes('\0')) id = value;
  };

  return {
    push(chunk) {
      let text = chunk;
      // A CR ended the last chunk: an LF starting this one belongs to the same line break.
      if (pendingCr && text.startsWith('\n')) text = text.slice(1);
      pendingCr = false;
      buffer += text;
      let start = 0;
      for (let i = 0; i < buffer.length; i += 1) {
        const c = buffer[i];
        if (c !== '\n' && c !== '\r') continue;
        line(buffer.slice(start, i));
        if (c === '\r') {
          if (i + 1 < buffer.length) {
            if (buffer[i + 1] === '\n') i += 1;
          } else pendingCr = true;
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
    },
    end() {
      buffer = '';
      event = '';
      data = [];
      hasData = false;
    },
  };
}

/** Reads a fetch body to its end, handing each event to onEvent. */
export async function readSse(body: ReadableStream<Uint8Array>, onEvent: (e: SseEvent) => void): Promise<void> {
  const parser = createSseParser(onEvent);
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
    parser.end();
  } finally {
    reader.releaseLock();
  }
}
