import type { MessageKey } from './locales/i18n.ts';

/**
 * SPEC §2 route table as data: paths, names, title keys, menus, frames and the pinned (affix) tab.
 * No components here: the router (routes.tsx) attaches a lazily loaded page to each name, and the
 * menus, the tab strip, document titles and links read this module without importing any page,
 * so nothing imports in a circle.
 */

/** The frame a page renders in: none (sign-in screens), the public site, or the /center console. */
export type RouteFrame = 'bare' | 'site' | 'center';
// Issue #10: 'disk' for /center/system (web), 'image' for 我的镜像 (images).
export type CenterMenuIcon = 'home' | 'safe' | 'expense' | 'instance' | 'key' | 'bill' | 'order' | 'api' | 'disk' | 'image';

export type AppRoute = {
  name: string;
  path: string;
  title: MessageKey;
  frame: RouteFrame;
  /** A pinned tab of the /center tab strip. */
  affix?: boolean;
  /** Its place in the /center side menu. */
  centerMenu?: { order: number; icon: CenterMenuIcon };
};

export const appRoutes = [
  { name: 'login', path: '/login', title: 'auth.loginTitle', frame: 'bare' },
  { name: 'register', path: '/register', title: 'auth.registerTitle', frame: 'bare' },
  { name: 'home0', path: '/page', title: 'nav.home', frame: 'site' },
  { name: 'home1', path: '/pagehome', title: 'nav.home', frame: 'site' },
  { name: 'home2', path: '/pagehtml', title: 'nav.home', frame: 'site' },
  { name: 'help', path: '/help', title: 'nav.help', frame: 'site' },
  { name: 'about', path: '/about', title: 'site.aboutTitle', frame: 'site' },
  { name: 'contact', path: '/contact', title: 'site.contactTitle', frame: 'site' },
  { name: 'reservationForm', path: '/reservationForm', title: 'site.reservationTitle', frame: 'site' },
  { name: 'recharge', path: '/recharge/index', title: 'wallet.recharge.title', frame: 'site' },
  { name: 'rechargeSuccess', path: '/recharge/success', title: 'wallet.recharge.resultTitle', frame: 'site' },
  { name: 'rechargeFailure', path: '/recharge/failure', title: 'wallet.recharge.resultTitle', frame: 'site' },
  { name: 'rechargeTimeout', path: '/recharge/timeout', title: 'wallet.recharge.resultTitle', frame: 'site' },
  // Issue #8: the compute market, ordering and the web shell.
  { name: 'market', path: '/market/index', title: 'compute.market.title', frame: 'site' },
  { name: 'marketCreate', path: '/market/create', title: 'compute.create.title', frame: 'site' },
  { name: 'controlCreate', path: '/control/create', title: 'compute.create.title', frame: 'site' },
  { name: 'orderCheck', path: '/market/orderdetail', title: 'compute.check.title', frame: 'site' },
  { name: 'webshell', path: '/shell', title: 'compute.shell.title', frame: 'bare' },
  { name: 'centerHome', path: '/center/home', title: 'center.menu.home', frame: 'center', affix: true, centerMenu: { order: 1, icon: 'home' } },
  { name: 'userSafe', path: '/center/user/safe', title: 'center.menu.safe', frame: 'center', centerMenu: { order: 8, icon: 'safe' } },
  { name: 'incomeExpend', path: '/center/expense/incomeExpend', title: 'wallet.menu.incomeExpend', frame: 'center', centerMenu: { order: 5, icon: 'expense' } },
  { name: 'centerControl', path: '/center/control/index', title: 'compute.instances.title', frame: 'center', centerMenu: { order: 2, icon: 'instance' } },
  { name: 'sshKeys', path: '/center/ssh/control', title: 'compute.sshKeys.title', frame: 'center', centerMenu: { order: 3, icon: 'key' } },
  { name: 'controlSshKeys', path: '/center/control/control', title: 'compute.sshKeys.title', frame: 'center' },
  { name: 'bills', path: '/center/expense/check', title: 'compute.bills.title', frame: 'center', centerMenu: { order: 6, icon: 'bill' } },
  { name: 'orders', path: '/center/expense/order/order', title: 'compute.orders.title', frame: 'center', centerMenu: { order: 7, icon: 'order' } },
  { name: 'orderDetail', path: '/center/expense/order/orderDetail', title: 'compute.orders.detailTitle', frame: 'center' },
  { name: 'onlyCom', path: '/center/onlyCom', title: 'center.onlyComTitle', frame: 'center' },
  { name: 'operateHome', path: '/operate/home', title: 'site.operate.title', frame: 'bare' },
  // Issue #9 (web): the large-model platform; its API keys also in the console.
  { name: 'modelSquare', path: '/largeModel/modelSquare', title: 'llm.square.title', frame: 'site' },
  { name: 'textChat', path: '/largeModel/textChat', title: 'llm.chat.title', frame: 'site' },
  { name: 'apiKey', path: '/largeModel/apiKey', title: 'llm.keys.title', frame: 'site' },
  { name: 'usageChart', path: '/largeModel/usageChart', title: 'llm.usage.title', frame: 'site' },
  { name: 'aiApiKey', path: '/center/ai-apiKey', title: 'llm.keys.title', frame: 'center', centerMenu: { order: 4, icon: 'api' } },
  // Issue #10 (web): billing changes, disks and the no-GPU mode of an instance.
  { name: 'changeContract', path: '/center/control/changeContract', title: 'ops.changeContract.title', frame: 'center' },
  { name: 'changeContractPreview', path: '/center/control/changeContractPreview', title: 'ops.toPayg.title', frame: 'center' },
  { name: 'renewal', path: '/center/control/renewal', title: 'ops.renewal.title', frame: 'center' },
  { name: 'changeOrderDetail', path: '/center/control/changeOrderdetail', title: 'ops.check.title', frame: 'center' },
  { name: 'expandControl', path: '/center/control/expand/control', title: 'ops.expand.title', frame: 'center' },
  { name: 'centerSystem', path: '/center/system', title: 'ops.system.title', frame: 'center', centerMenu: { order: 2.5, icon: 'disk' } },
  // Issue #10 (images, clone, data copy)
  { name: 'centerImages', path: '/center/image/index', title: 'images.mine.title', frame: 'center', centerMenu: { order: 3.5, icon: 'image' } },
  { name: 'centerImageDetail', path: '/center/image/detail', title: 'images.detail.title', frame: 'center' },
  { name: 'communityImages', path: '/images/index', title: 'images.community.title', frame: 'site' },
  { name: 'communityImageDetail', path: '/images/detail', title: 'images.community.detailTitle', frame: 'site' },
  { name: 'controlClone', path: '/control/clone', title: 'images.clone.title', frame: 'site' },
] as const satisfies readonly AppRoute[];

export type RouteName = (typeof appRoutes)[number]['name'];

/** Paths that only forward to a page. */
export const routeRedirects: Readonly<Record<string, string>> = {
  '/center': '/center/home',
  '/center/user': '/center/user/safe',
  '/center/expense': '/center/expense/incomeExpend',
  // Issue #8
  '/control': '/center/control',
  '/center/control': '/center/control/index',
  '/center/ssh': '/center/ssh/control',
  '/center/expense/order': '/center/expense/order/order',
  // Issue #9 (web)
  '/largeModel': '/largeModel/modelSquare',
  '/ai-apiKey': '/center/ai-apiKey',
  // Issue #10 (images)
  '/center/image': '/center/image/index',
  '/images': '/images/index',
};

/** What any other path shows. */
export const notFoundRoute: AppRoute = { name: 'notFound', path: '*', title: 'common.notFoundTitle', frame: 'bare' };

const byName = new Map<string, AppRoute>(appRoutes.map((r) => [r.name, r]));
const byPath = new Map<string, AppRoute>(appRoutes.map((r) => [r.path.toLowerCase(), r]));

/** The path of a named route: links never spell a path the table doesn't have. */
export function pathOf(name: RouteName): string {
  const route = byName.get(name);
  if (!route) throw new Error(`unknown route ${name}`);
  return route.path;
}

const normalise = (pathname: string) => (pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname).toLowerCase();

/** The page a pathname shows (react-router matches case-insensitively), or undefined for the 404. */
export function findRoute(pathname: string): AppRoute | undefined {
  return byPath.get(normalise(pathname));
}

/** True when the table has a page for `path` (query ignored): menus show only what exists. */
export function isRouteAvailable(path: string): boolean {
  const bare = path.split(/[?#]/)[0] ?? '';
  return Boolean(findRoute(bare) ?? routeRedirects[normalise(bare)]);
}

/** The /center side menu, in order. */
export const centerMenu: { path: string; title: MessageKey; icon: CenterMenuIcon }[] = (appRoutes as readonly AppRoute[])
  .filter((r): r is AppRoute & { centerMenu: NonNullable<AppRoute['centerMenu']> } => Boolean(r.centerMenu))
  .sort((a, b) => a.centerMenu.order - b.centerMenu.order)
  .map((r) => ({ path: r.path, title: r.title, icon: r.centerMenu.icon }));

/** SPEC §2: "<page> - <tenant>" for the browser tab. */
export function documentTitle(pageTitle: string, tenantTitle: string): string {
  return pageTitle && pageTitle !== tenantTitle ? `${pageTitle} - ${tenantTitle}` : tenantTitle;
}
