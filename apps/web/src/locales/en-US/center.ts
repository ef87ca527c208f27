import type { Dict } from '../types.ts';
import type zh from '../zh-CN/center.ts';

export default {
  menu: {
    home: 'Home',
    safe: 'Account security',
    label: 'Console menu',
  },
  tabs: { closeOthers: 'Close others', closeAll: 'Close all', refresh: 'Refresh' },
  tabsLabel: 'Open pages',
  closeTab: 'Close “{title}”',
  onlyComTitle: 'Enterprise customers only',
  onlyComDesc: 'This feature is available to enterprise-certified customers. Complete enterprise certification to use it.',
  onlyComAction: 'Contact us',
  home: {
    greeting: 'Hello, {name}',
    balanceCard: 'Balance',
    frozen: 'Frozen {amount}',
    recharge: 'Recharge',
    account: 'Account',
    phone: 'Phone',
    realName: 'Real-name',
    accountType: 'Account type',
    personal: 'Personal',
    enterprise: 'Enterprise',
    registeredAt: 'Registered',
    shortcuts: 'Shortcuts',
    security: 'Account security',
    help: 'Help',
    contact: 'Contact us',
    datahub: 'Datahub',
    instances: 'Instances',
    instancesRunning: '{count}',
  },
} satisfies Dict<typeof zh>;
