import type { CaptchaType } from '@suanli/contract/tenant';
import type { StoredAnswer } from './captcha.verifier.ts';
import { renderClick } from './images/click.ts';
import { renderPuzzle } from './images/puzzle.ts';
import { renderRotate } from './images/rotate.ts';
import type { ChallengeView } from './images/sizes.ts';

/** Draws a new challenge of `type`: what the user sees, and the secret answer to keep. */
export async function renderChallenge(type: CaptchaType): Promise<{ view: ChallengeView; answer: StoredAnswer }> {
  switch (type) {
    case 'slide':
    case 'drag': {
      const { view, answer } = await renderPuzzle(type);
      return { view, answer: { type, ...answer } };
    }
    case 'rotate': {
      const { view, answer } = await renderRotate();
      return { view, answer: { type, ...answer } };
    }
    case 'click': {
      const { view, answer } = await renderClick();
      return { view, answer: { type, ...answer } };
    }
  }
}
