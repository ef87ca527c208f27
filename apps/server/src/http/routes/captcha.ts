import { okEnvelope } from '@suanli/contract/envelope';
import { captchaChallenge, captchaCheckBody, captchaTicket } from '@suanli/contract/captcha';
import type { CaptchaType } from '@suanli/contract/tenant';
import { RATE_LIMITS, type App } from '../route-types.ts';
import { ok } from '../envelope.ts';
import type { CaptchaService } from '../../modules/captcha/captcha.service.ts';

const summaries: Record<CaptchaType, string> = {
  click: '获取点选验证码（依次点击图中文字）',
  slide: '获取滑动拼图验证码',
  rotate: '获取旋转验证码',
  drag: '获取拖动拼图验证码',
};

const issueDescription =
  '返回 PNG（data URL）背景图 image 与缩略图 thumb，坐标以图片像素计。key 用于校验，2 分钟内有效且只能校验一次。' +
  'slide：拼图块从 (thumbX, thumbY) 出发沿该行左右移动；drag：从 (thumbX, thumbY) 出发任意拖动；rotate：thumb 为圆形图片，angle 恒为 0，用户顺时针旋转；click：words 为需依次点击的文字，thumb 为 150×40 的文字提示图。';

const checkDescription =
  'answer：click 为 {points:[{index,x,y}]}（index 为点击顺序，从 0 开始）；slide/drag 为拼图块左上角 {x,y}；rotate 为用户顺时针旋转的角度 {angle}。' +
  'track：控件记录的操作轨迹 [[t, a, b], …]（slide/drag 为拼图块左上角 x、y，rotate 为角度与 0，click 为每次点击的 x、y；t 为毫秒），须是自起点到答案的合理操作过程。' +
  '答对返回一次性票据 ticket（2 分钟内有效），用于发送短信验证码或登录。';

export function captchaRoutes(app: App, captcha: CaptchaService) {
  const tags = ['验证码'];
  const issued = { 200: okEnvelope(captchaChallenge) };

  app.get('/user/captcha', { config: { rateLimit: RATE_LIMITS.captcha }, schema: { tags, summary: '获取验证码（租户配置的类型）', description: issueDescription, response: issued } }, async (req, reply) => {
    // A challenge is single-use: no cache may hand the same one out twice.
    reply.header('cache-control', 'no-store');
    return ok(await captcha.issue(req.tenant.id, req.tenant.captchaType));
  });

  for (const [type, summary] of Object.entries(summaries) as [CaptchaType, string][]) {
    app.get(`/user/captcha/${type}`, { config: { rateLimit: RATE_LIMITS.captcha }, schema: { tags, summary, description: issueDescription, response: issued } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return ok(await captcha.issue(req.tenant.id, type));
    });
  }

  app.post(
    '/user/captcha/check',
    { config: { rateLimit: RATE_LIMITS.captcha }, schema: { tags, summary: '校验验证码，答对返回一次性票据', description: checkDescription, body: captchaCheckBody, response: { 200: okEnvelope(captchaTicket) } } },
    async (req) => ok(await captcha.check(req.tenant.id, req.body)),
  );
}
