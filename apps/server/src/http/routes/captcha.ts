import type { App } from '../route-types.ts';
import type { CaptchaService } from '../../modules/captcha/captcha.service.ts';

export function captchaRoutes(_app: App, _captcha: CaptchaService) {}
