import crypto from 'node:crypto';

/**
 * Randomness for captchas. Anything that decides an answer (positions, angles, characters) comes
 * from the CSPRNG so it can't be predicted; decoration uses Math.random, which is cheaper and
 * only has to look different each time.
 */

/** Uniform integer in [min, max], both inclusive. Layouts take one, so a seed can replay them. */
export type IntSource = (min: number, max: number) => number;

/** Uniform integer in [min, max], both inclusive, from the CSPRNG: the source of every real answer. */
export const secureInt: IntSource = (min, max) => crypto.randomInt(min, max + 1);

/**
 * A deterministic source (mulberry32) for measuring answer statistics over many layouts, e.g. how
 * often a blind guess passes. Never for real challenges: its answers are predictable.
 */
export function seededInt(seed: number): IntSource {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return (min, max) => min + Math.floor(next() * (max - min + 1));
}

/** `n` distinct items of `pool` in random order, from `int` (the CSPRNG by default). */
export function securePick<T>(pool: readonly T[], n: number, int: IntSource = secureInt): T[] {
  const copy = [...pool];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = int(0, i);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}

/** Decoration only: a float in [min, max). */
export function rand(min: number, max: number): number {
  return min + Math.random() * (max - min);
}

/** Decoration only: one item of a non-empty list. */
export function randItem<T>(items: readonly [T, ...T[]]): T {
  return items[Math.floor(Math.random() * items.length)] ?? items[0];
}
