import { Navigate, type RouteObject } from 'react-router';
import type { MessageKey } from './locales/i18n.ts';
import { RouteGuard } from './modules/RouteGuard.tsx';

/** Route metadata of SPEC §2: a name, a title for tabs and menus, and whether the tab is pinned. */
export type AppHandle = { name: string; title: MessageKey; affix?: boolean };

type Lazy = RouteObject['lazy'];
/** Each page is its own chunk: the first page loads only what it shows. */
const page =
  <M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string): Lazy =>
  async () => ({ Component: (await load())[name] as React.ComponentType });

export const routes: RouteObject[] = [
  {
    element: <RouteGuard />,
    children: [
      { path: '/login', handle: { name: 'login', title: 'auth.loginTitle' } satisfies AppHandle, lazy: page(() => import('./pages/auth/LoginPage.tsx'), 'LoginPage') },
      { path: '/register', handle: { name: 'register', title: 'auth.registerTitle' } satisfies AppHandle, lazy: page(() => import('./pages/auth/RegisterPage.tsx'), 'RegisterPage') },
      {
        path: '/',
        lazy: page(() => import('./pages/layout/RootLayout.tsx'), 'RootLayout'),
        children: [
          { path: 'page', handle: { name: 'home0', title: 'nav.home' } satisfies AppHandle, lazy: page(() => import('./pages/home/HomeClassic.tsx'), 'HomeClassic') },
          { path: 'pagehome', handle: { name: 'home1', title: 'nav.home' } satisfies AppHandle, lazy: page(() => import('./pages/home/HomeShowcase.tsx'), 'HomeShowcase') },
          { path: 'pagehtml', handle: { name: 'home2', title: 'nav.home' } satisfies AppHandle, lazy: page(() => import('./pages/home/HomeMinimal.tsx'), 'HomeMinimal') },
          { path: 'help', handle: { name: 'help', title: 'nav.help' } satisfies AppHandle, lazy: page(() => import('./pages/site/HelpPage.tsx'), 'HelpPage') },
          { path: 'about', handle: { name: 'about', title: 'site.aboutTitle' } satisfies AppHandle, lazy: page(() => import('./pages/site/AboutPage.tsx'), 'AboutPage') },
          { path: 'contact', handle: { name: 'contact', title: 'site.contactTitle' } satisfies AppHandle, lazy: page(() => import('./pages/site/ContactPage.tsx'), 'ContactPage') },
          {
            path: 'reservationForm',
            handle: { name: 'reservationForm', title: 'site.reservationTitle' } satisfies AppHandle,
            lazy: page(() => import('./pages/site/ReservationFormPage.tsx'), 'ReservationFormPage'),
          },
          { path: 'recharge/index', handle: { name: 'recharge', title: 'wallet.recharge.title' } satisfies AppHandle, lazy: page(() => import('./pages/recharge/RechargePage.tsx'), 'RechargePage') },
          { path: 'recharge/success', handle: { name: 'rechargeSuccess', title: 'wallet.recharge.resultTitle' } satisfies AppHandle, lazy: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeSuccessPage') },
          { path: 'recharge/failure', handle: { name: 'rechargeFailure', title: 'wallet.recharge.resultTitle' } satisfies AppHandle, lazy: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeFailurePage') },
          { path: 'recharge/timeout', handle: { name: 'rechargeTimeout', title: 'wallet.recharge.resultTitle' } satisfies AppHandle, lazy: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeTimeoutPage') },
        ],
      },
      {
        path: '/center',
        lazy: page(() => import('./pages/center/CenterLayout.tsx'), 'CenterLayout'),
        children: [
          { index: true, element: <Navigate to="/center/home" replace /> },
          { path: 'home', handle: { name: 'centerHome', title: 'center.menu.home', affix: true } satisfies AppHandle, lazy: page(() => import('./pages/center/home/CenterHomePage.tsx'), 'CenterHomePage') },
          {
            path: 'user',
            children: [
              { index: true, element: <Navigate to="/center/user/safe" replace /> },
              { path: 'safe', handle: { name: 'userSafe', title: 'center.menu.safe' } satisfies AppHandle, lazy: page(() => import('./pages/center/user/SafePage.tsx'), 'SafePage') },
            ],
          },
          {
            path: 'expense',
            children: [
              { index: true, element: <Navigate to="/center/expense/incomeExpend" replace /> },
              { path: 'incomeExpend', handle: { name: 'incomeExpend', title: 'wallet.menu.incomeExpend' } satisfies AppHandle, lazy: page(() => import('./pages/center/expense/IncomeExpendPage.tsx'), 'IncomeExpendPage') },
            ],
          },
          { path: 'onlyCom', handle: { name: 'onlyCom', title: 'center.onlyComTitle' } satisfies AppHandle, lazy: page(() => import('./pages/center/OnlyComPage.tsx'), 'OnlyComPage') },
        ],
      },
      { path: '/operate/home', handle: { name: 'operateHome', title: 'site.operate.title' } satisfies AppHandle, lazy: page(() => import('./pages/operate/OperateHomePage.tsx'), 'OperateHomePage') },
      { path: '*', handle: { name: 'notFound', title: 'common.notFoundTitle' } satisfies AppHandle, lazy: page(() => import('./pages/NotFoundPage.tsx'), 'NotFoundPage') },
    ],
  },
];

/** The /center side menu, in order; later areas add their entries here. */
export const centerMenu: { path: string; title: MessageKey; icon: 'home' | 'safe' | 'expense' }[] = [
  { path: '/center/home', title: 'center.menu.home', icon: 'home' },
  { path: '/center/expense/incomeExpend', title: 'wallet.menu.incomeExpend', icon: 'expense' },
  { path: '/center/user/safe', title: 'center.menu.safe', icon: 'safe' },
];
