import crypto from 'node:crypto';

/**
 * Randomness for captchas. Anything that decides an answer (positions, angles, characters) comes
 * from the CSPRNG so it can't be predicted; decoration uses Math.random, which is cheaper and
 * only has to look different each time.
 */

/** Uniform integer in [min, max], both inclusive, from the CSPRNG. */
export function secureInt(min: number, max: number): number {
  return crypto.randomInt(min, max + 1);
}

/** `n` distinct items of `pool` in random order, from the CSPRNG. */
export function securePick<T>(pool: readonly T[], n: number): T[] {
  const copy = [...pool];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = crypto.randomInt(0, i + 1);
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
