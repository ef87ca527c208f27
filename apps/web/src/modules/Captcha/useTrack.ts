import { useRef } from 'react';

/** [ms since the first sample, a, b]: the contract's captchaTrack sample. */
export type TrackSample = [number, number, number];

/** The contract allows 600 samples; a long, slow drag is thinned rather than cut. */
const MAX_SAMPLES = 500;

/**
 * Records what the user did while answering, for the server's plausibility check (contract
 * captchaTrack): `begin` at the press (or the first key), `add` on every move, `end` with the
 * final position, which must be the answer sent.
 */
export function useTrack() {
  const samples = useRef<TrackSample[]>([]);
  const origin = useRef<number | null>(null);
  const add = (a: number, b = 0) => {
    if (origin.current === null) origin.current = performance.now();
    samples.current.push([Math.round(performance.now() - origin.current), Math.round(a), Math.round(b)]);
    if (samples.current.length > MAX_SAMPLES) samples.current = samples.current.filter((_, i, all) => i % 2 === 0 || i === all.length - 1);
  };
  return {
    /** Starts a new record at the piece's starting position. */
    begin(a: number, b = 0) {
      samples.current = [];
      origin.current = null;
      add(a, b);
    },
    /** Starts a record only if none is under way (keyboard use: the first key press). */
    ensure(a: number, b = 0) {
      if (origin.current === null) this.begin(a, b);
    },
    add,
    end(a: number, b = 0): TrackSample[] {
      add(a, b);
      return samples.current;
    },
    /** Forgets the record (a press that moved nothing). */
    reset() {
      samples.current = [];
      origin.current = null;
    },
  };
}
