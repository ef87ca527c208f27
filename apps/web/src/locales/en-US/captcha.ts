import type { Dict } from '../types.ts';
import type zh from '../zh-CN/captcha.ts';

export default {
  modalTitle: 'Security check',
  clickTitle: 'Please click in order on the image',
  slideTitle: 'Please drag the slider to complete the puzzle',
  dragTitle: 'Please drag the tile to complete the puzzle',
  rotateTitle: 'Please drag the slider to turn the image upright',
  buttonText: 'Click the button to verify',
  verified: 'Verified',
  success: 'Verified',
  checking: 'Checking…',
  failed: 'Verification failed, please try again',
  loadFailed: 'Failed to load the captcha, please try again',
  reload: 'Reload',
  refresh: 'Another one',
  imageAlt: 'Captcha image',
  pieceAlt: 'Puzzle tile',
  rotateAlt: 'Image to turn',
  wordsAlt: 'Click in order: {words}',
  sliderLabel: 'Drag the slider',
  clickUndo: 'Click a number to undo it',
  clickMarker: 'Click {n}, click to undo',
} satisfies Dict<typeof zh>;
