import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatMoney } from '@suanli/domain/format';
import type { App } from '../route-types.ts';
import type { CashierAction, CashierView, SandboxCashierService } from '../../modules/payment/sandbox-cashier.service.ts';

const ACTIONS: readonly CashierAction[] = ['pay', 'fail', 'abandon'];
const isAction = (a: string): a is CashierAction => (ACTIONS as readonly string[]).includes(a);

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Beijing time whatever the server's TZ: the payer is in China. */
const beijingTime = (d: Date) => new Date(d.getTime() + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

const STYLE = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f0f2f5;
  font:14px/1.6 -apple-system,BlinkMacSystemFont,"PingFang SC","Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei","Noto Sans CJK SC",sans-serif;color:#1f1f1f}
.card{width:min(420px,calc(100vw - 32px));background:#fff;border-radius:12px;box-shadow:0 6px 24px rgba(0,0,0,.08);overflow:hidden}
.head{padding:20px 24px;background:linear-gradient(135deg,#1677ff,#4096ff);color:#fff}
.head h1{margin:0;font-size:18px;font-weight:600}
.badge{display:inline-block;margin-top:6px;padding:0 8px;border-radius:10px;background:rgba(255,255,255,.2);font-size:12px}
.body{padding:24px}
.amount{text-align:center;margin:4px 0 20px}
.amount .label{color:#8c8c8c;font-size:13px}
.amount .value{font-size:36px;font-weight:600;color:#1f1f1f;letter-spacing:.5px}
dl{display:grid;grid-template-columns:auto 1fr;gap:8px 16px;margin:0 0 24px;padding:16px;background:#fafafa;border-radius:8px}
dt{color:#8c8c8c}dd{margin:0;word-break:break-all;text-align:right}
form{margin:0 0 10px}
button{width:100%;height:42px;border-radius:8px;font-size:15px;cursor:pointer;border:1px solid #d9d9d9;background:#fff;color:#1f1f1f}
button.primary{background:#1677ff;border-color:#1677ff;color:#fff}
button.primary:hover{background:#4096ff}
button.danger{color:#ff4d4f;border-color:#ff4d4f}
button.danger:hover{background:#fff1f0}
button.plain:hover{border-color:#4096ff;color:#4096ff}
.notice{padding:16px;border-radius:8px;background:#fffbe6;border:1px solid #ffe58f;text-align:center}
.notice.ok{background:#f6ffed;border-color:#b7eb8f}
.notice.bad{background:#fff2f0;border-color:#ffccc7}
.foot{padding:12px 24px;border-top:1px solid #f0f0f0;color:#8c8c8c;font-size:12px;text-align:center}
`;

function layout(title: string, inner: string): string {
  return `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main class="card">${inner}<div class="foot">沙箱环境仅用于演示与测试，不会产生任何真实扣款</div></main></body></html>`;
}

const STATE_TEXT: Record<Exclude<CashierView['state'], 'open'>, { cls: string; text: string }> = {
  paid: { cls: 'ok', text: '该订单已支付成功，无需重复支付。' },
  failed: { cls: 'bad', text: '该订单已支付失败，请返回重新下单。' },
  expired: { cls: '', text: '该订单已超时关闭，请返回重新下单。' },
};

function cashierPage(v: CashierView): string {
  const id = encodeURIComponent(v.outTradeNo);
  const sig = escapeHtml(v.sig);
  const button = (action: CashierAction, cls: string, label: string) =>
    `<form method="post" action="/sandbox/cashier/${id}/${action}"><input type="hidden" name="sig" value="${sig}"><button type="submit" class="${cls}">${label}</button></form>`;
  const actions =
    v.state === 'open'
      ? button('pay', 'primary', '确认支付') + button('fail', 'danger', '模拟支付失败') + button('abandon', 'plain', '放弃支付')
      : `<div class="notice ${STATE_TEXT[v.state].cls}">${STATE_TEXT[v.state].text}</div>`;
  return layout(
    `沙箱收银台 - ${v.merchant}`,
    `<div class="head"><h1>沙箱收银台</h1><span class="badge">模拟支付</span></div>
<div class="body">
<div class="amount"><div class="label">应付金额</div><div class="value">${escapeHtml(formatMoney(v.amount))}</div></div>
<dl><dt>商户</dt><dd>${escapeHtml(v.merchant)}</dd><dt>商品</dt><dd>${escapeHtml(v.subject)}</dd>
<dt>订单号</dt><dd>${escapeHtml(v.paymentId)}</dd><dt>支付截止</dt><dd>${beijingTime(v.expiresAt)}（北京时间）</dd></dl>
${actions}
</div>`,
  );
}

const invalidPage = () =>
  layout('支付链接无效', `<div class="head"><h1>沙箱收银台</h1></div><div class="body"><div class="notice bad">支付链接无效或已失效，请返回商户页面重新发起支付。</div></div>`);

function sendHtml(reply: FastifyReply, status: number, html: string) {
  return reply
    .status(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      // The URL carries the link's HMAC: keep it out of caches and Referer headers.
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
    })
    .send(html);
}

const sigOf = (v: unknown): string => (typeof v === 'object' && v !== null && 'sig' in v && typeof v.sig === 'string' ? v.sig : '');

/**
 * The sandbox gateway's cashier (public, server-rendered, no external assets): the page payUrl
 * points to and the payer's three choices, each a form POST that ends in a 303 to the app's result
 * page. Problems answer an HTML page, never the JSON envelope: a browser is on the other end.
 */
export function sandboxCashierRoutes(app: App, cashier: SandboxCashierService) {
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<ZodTypeProvider>();
    // Plain HTML forms post urlencoded bodies, which the API itself never accepts.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, async (_req: FastifyRequest, body: string | Buffer) =>
      Object.fromEntries(new URLSearchParams(body.toString())),
    );

    scope.get(
      '/sandbox/cashier/:id',
      { schema: { hide: true, params: z.object({ id: z.string() }), querystring: z.object({ sig: z.string().optional() }) } },
      async (req, reply) => {
        const view = await cashier.view(req.params.id, req.query.sig ?? '');
        return view ? sendHtml(reply, 200, cashierPage(view)) : sendHtml(reply, 404, invalidPage());
      },
    );

    scope.post(
      '/sandbox/cashier/:id/:action',
      { schema: { hide: true, params: z.object({ id: z.string(), action: z.string() }) } },
      async (req, reply) => {
        const { id, action } = req.params;
        const result = isAction(action) ? await cashier.act(id, sigOf(req.body), action, req.headers.host) : undefined;
        return result ? reply.redirect(result.location, 303) : sendHtml(reply, 404, invalidPage());
      },
    );
  });
}
