import { UpstreamError } from './port.ts';

/**
 * A concurrency cap with a bounded waiting line, shared by the upstream adapters: `limit` calls run
 * at once, up to `maxWaiting` more wait in order, anything beyond is refused at once with
 * UpstreamError('busy') (→ 429). A waiter whose signal aborts leaves the line.
 */
export type Slots = {
  acquire(signal: AbortSignal): Promise<() => void>;
  readonly running: number;
  readonly waiting: number;
  /** Resolves once nothing runs or waits. */
  idle(): Promise<void>;
};

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(typeof reason === 'string' ? reason : 'The operation was aborted', 'AbortError');
}

export function createSlots(limit: number, maxWaiting: number, label: string): Slots {
  let running = 0;
  const line: { grant: () => void; reject: (e: Error) => void }[] = [];
  let idlers: (() => void)[] = [];

  const release = () => {
    const next = line.shift();
    if (next) next.grant();
    else running--;
    if (running === 0 && line.length === 0 && idlers.length) {
      const waiting = idlers;
      idlers = [];
      for (const w of waiting) w();
    }
  };
  const releaser = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };

  return {
    get running() {
      return running;
    },
    get waiting() {
      return line.length;
    },
    idle() {
      if (running === 0 && line.length === 0) return Promise.resolve();
      return new Promise<void>((r) => idlers.push(r));
    },
    acquire(signal) {
      if (signal.aborted) return Promise.reject(abortError(signal));
      if (running < limit) {
        running++;
        return Promise.resolve(releaser());
      }
      if (line.length >= maxWaiting) {
        return Promise.reject(new UpstreamError('busy', `${label}: ${running} calls running and ${line.length} waiting (limit ${limit} + ${maxWaiting})`));
      }
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const i = line.indexOf(entry);
          if (i >= 0) line.splice(i, 1);
          reject(abortError(signal));
        };
        const entry = {
          grant: () => {
            signal.removeEventListener('abort', onAbort);
            resolve(releaser());
          },
          reject,
        };
        line.push(entry);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

/** A push → pull bridge: callbacks push events, one consumer iterates them. */
export function createChannel<T>() {
  const items: T[] = [];
  let ended = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    push(item: T) {
      if (ended) return;
      items.push(item);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    fail(error: unknown) {
      if (ended) return;
      failure = { error };
      ended = true;
      notify();
    },
    async *[Symbol.asyncIterator](): AsyncGenerator<T> {
      for (;;) {
        if (items.length) {
          yield items.shift() as T;
          continue;
        }
        if (failure) throw failure.error;
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
}
