import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import { Navigate, type RouteObject } from 'react-router';
import { RouteGuard } from './modules/RouteGuard.tsx';
import { loadPageMessages } from './locales/i18n.ts';
import { appRoutes, routeRedirects, type RouteFrame, type RouteName } from './route-table.ts';

/**
 * Each page is its own chunk: the first page loads only what it shows. Pages other than the
 * sign-in screens (`signIn`) also wait for the Chinese of the other namespaces.
 */
const page = <M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string, signIn = false): LazyExoticComponent<ComponentType> =>
  lazy(async () => {
    const [module] = await Promise.all([load(), signIn ? undefined : loadPageMessages()]);
    return { default: module[name] as ComponentType };
  });

/** The component of every named route of the table (route-table.ts holds the rest). */
const pages: Record<RouteName, LazyExoticComponent<ComponentType>> = {
  login: page(() => import('./pages/auth/LoginPage.tsx'), 'LoginPage', true),
  register: page(() => import('./pages/auth/RegisterPage.tsx'), 'RegisterPage', true),
  home0: page(() => import('./pages/home/HomeClassic.tsx'), 'HomeClassic'),
  home1: page(() => import('./pages/home/HomeShowcase.tsx'), 'HomeShowcase'),
  home2: page(() => import('./pages/home/HomeMinimal.tsx'), 'HomeMinimal'),
  help: page(() => import('./pages/site/HelpPage.tsx'), 'HelpPage'),
  about: page(() => import('./pages/site/AboutPage.tsx'), 'AboutPage'),
  contact: page(() => import('./pages/site/ContactPage.tsx'), 'ContactPage'),
  reservationForm: page(() => import('./pages/site/ReservationFormPage.tsx'), 'ReservationFormPage'),
  recharge: page(() => import('./pages/recharge/RechargePage.tsx'), 'RechargePage'),
  rechargeSuccess: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeSuccessPage'),
  rechargeFailure: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeFailurePage'),
  rechargeTimeout: page(() => import('./pages/recharge/RechargeResultPage.tsx'), 'RechargeTimeoutPage'),
  centerHome: page(() => import('./pages/center/home/CenterHomePage.tsx'), 'CenterHomePage'),
  userSafe: page(() => import('./pages/center/user/SafePage.tsx'), 'SafePage'),
  incomeExpend: page(() => import('./pages/center/expense/IncomeExpendPage.tsx'), 'IncomeExpendPage'),
  onlyCom: page(() => import('./pages/center/OnlyComPage.tsx'), 'OnlyComPage'),
  operateHome: page(() => import('./pages/operate/OperateHomePage.tsx'), 'OperateHomePage'),
  market: page(() => import('./pages/market/MarketPage.tsx'), 'MarketPage'),
  marketCreate: page(() => import('./pages/market/CreateInstancePage.tsx'), 'CreateInstancePage'),
  controlCreate: page(() => import('./pages/market/CreateInstancePage.tsx'), 'CreateInstancePage'),
  orderCheck: page(() => import('./pages/market/OrderCheckPage.tsx'), 'OrderCheckPage'),
  webshell: page(() => import('./pages/shell/ShellPage.tsx'), 'ShellPage'),
  centerControl: page(() => import('./pages/center/control/InstancesPage.tsx'), 'InstancesPage'),
  sshKeys: page(() => import('./pages/center/ssh/SshKeysPage.tsx'), 'SshKeysPage'),
  controlSshKeys: page(() => import('./pages/center/ssh/SshKeysPage.tsx'), 'SshKeysPage'),
  bills: page(() => import('./pages/center/expense/BillsPage.tsx'), 'BillsPage'),
  orders: page(() => import('./pages/center/expense/OrdersPage.tsx'), 'OrdersPage'),
  orderDetail: page(() => import('./pages/center/expense/OrderDetailPage.tsx'), 'OrderDetailPage'),
  // Issue #9 (web)
  modelSquare: page(() => import('./pages/largeModel/ModelSquarePage.tsx'), 'ModelSquarePage'),
  textChat: page(() => import('./pages/largeModel/TextChatPage.tsx'), 'TextChatPage'),
  apiKey: page(() => import('./pages/largeModel/ApiKeysPage.tsx'), 'ApiKeysPage'),
  usageChart: page(() => import('./pages/largeModel/UsageChartPage.tsx'), 'UsageChartPage'),
  aiApiKey: page(() => import('./pages/largeModel/ApiKeysPage.tsx'), 'ApiKeysPage'),
  // Issue #10 (web)
  changeContract: page(() => import('./pages/center/control/ChangeContractPage.tsx'), 'ChangeContractPage'),
  changeContractPreview: page(() => import('./pages/center/control/ChangeContractPreviewPage.tsx'), 'ChangeContractPreviewPage'),
  renewal: page(() => import('./pages/center/control/RenewalPage.tsx'), 'RenewalPage'),
  changeOrderDetail: page(() => import('./pages/center/control/ChangeOrderDetailPage.tsx'), 'ChangeOrderDetailPage'),
  expandControl: page(() => import('./pages/center/control/ExpandPage.tsx'), 'ExpandPage'),
  centerSystem: page(() => import('./pages/center/system/SystemDiskPage.tsx'), 'SystemDiskPage'),
  // Issue #10 (images, clone, data copy)
  centerImages: page(() => import('./pages/center/image/ImagesPage.tsx'), 'ImagesPage'),
  centerImageDetail: page(() => import('./pages/center/image/ImageDetailPage.tsx'), 'ImageDetailPage'),
  communityImages: page(() => import('./pages/images/CommunityPage.tsx'), 'CommunityPage'),
  communityImageDetail: page(() => import('./pages/images/CommunityDetailPage.tsx'), 'CommunityDetailPage'),
  controlClone: page(() => import('./pages/control/ClonePage.tsx'), 'ClonePage'),
};

const RootLayout = page(() => import('./pages/layout/RootLayout.tsx'), 'RootLayout');
const CenterLayout = page(() => import('./pages/center/CenterLayout.tsx'), 'CenterLayout');
const NotFoundPage = page(() => import('./pages/NotFoundPage.tsx'), 'NotFoundPage');

const children = (frame: RouteFrame): RouteObject[] =>
  appRoutes
    .filter((r) => r.frame === frame)
    .map((r) => {
      const Page = pages[r.name];
      return { path: r.path, element: <Page /> };
    });

/**
 * The router's table: the data of route-table.ts with its pages attached. Declarative routes
 * (useRoutes under a BrowserRouter) rather than a data router: nothing here loads data, and the
 * data router would add 16 KB to every first page.
 */
export const routes: RouteObject[] = [
  {
    element: <RouteGuard />,
    children: [
      ...children('bare'),
      { element: <RootLayout />, children: children('site') },
      { element: <CenterLayout />, children: children('center') },
      ...Object.entries(routeRedirects).map(([from, to]) => ({ path: from, element: <Navigate to={to} replace /> })),
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
