import type { Dict } from '../types.ts';
import type zh from '../zh-CN/help-articles.ts';

/** Shorter English versions of the help articles; same ids and order as zh-CN. */
export default {
  categories: [
    { key: 'start', title: 'Getting started' },
    { key: 'instance', title: 'Instances' },
    { key: 'billing', title: 'Billing' },
    { key: 'data', title: 'Data & storage' },
    { key: 'faq', title: 'FAQ' },
  ],
  articles: [
    {
      id: 'register',
      category: 'start',
      title: 'Sign up and sign in',
      summary: 'Sign up with a phone number; sign in by password or SMS code.',
      body: `## Sign up

1. Click “Sign in / Sign up” and switch to sign-up.
2. Enter your mainland China mobile number, pass the captcha and request a code.
3. Enter the 6-digit code and choose a password (8–64 characters, letters and digits).

## Signing in

- Password: a captcha appears after 3 failures; 10 failures lock the account for 15 minutes.
- SMS code: one code a minute, 10 a day, valid for 5 minutes.

Forgot your password? Reset it with an SMS code on the sign-in page.`,
    },
    {
      id: 'rent',
      category: 'instance',
      title: 'Renting an instance',
      summary: 'Pick a GPU and an image in the market, pay, and the instance starts.',
      body: `1. Open the compute market and filter by datacenter and GPU model.
2. Choose the GPU count and pay-as-you-go or prepaid billing.
3. Choose an image, review the price and pay from your balance.

> Unpaid orders expire after 15 minutes and hold no GPU.

Every instance has a 30 GB system disk and a free 50 GB data disk.`,
    },
    {
      id: 'connect',
      category: 'instance',
      title: 'SSH and web shell',
      summary: 'Log in with SSH or the browser web shell.',
      body: `## SSH

Copy the login command and password from the instance list:

$ ssh -p 32122 root@connect.example.com

Add your public key under Personal center → SSH keys to log in without a password.

## Web shell

Click “Terminal” on the instance to open a shell in the browser. Use tmux or nohup for long jobs.`,
    },
    {
      id: 'billing',
      category: 'billing',
      title: 'Billing rules',
      summary: 'Pay-as-you-go per second, settled every minute; prepaid plans; release rules.',
      body: `## Pay as you go

Hourly price accrued per second and settled every minute. Starting needs a balance covering one hour. A negative balance stops running pay-as-you-go instances; data is kept.

## Prepaid

Monthly or yearly (also weekly and daily on some hosts). Converting back to pay-as-you-go refunds unused time to the second.

## Release

- Instances stopped for 15 days are released.
- Prepaid instances are released 7 days after expiry unless renewed.
- Releasing deletes the disks for good.

## Top-up

1 to 100,000 yuan per payment; unpaid payments close after 15 minutes.`,
    },
    {
      id: 'invoice',
      category: 'billing',
      title: 'Invoices and orders',
      summary: 'Orders, bills, and invoices for paid top-ups and orders.',
      body: `Orders are unpaid, paid, cancelled or expired. Bills list every settled charge.

Fill in your invoice details under Expenses → Invoices, then apply for paid top-ups or orders not yet invoiced.`,
    },
    {
      id: 'datahub',
      category: 'data',
      title: 'Datahub',
      summary: 'A per-datacenter transfer endpoint shared by your instances in the region.',
      body: `Open Tools → Datahub in the navigation bar and activate the datacenter of your instances. The status refreshes every 3 seconds until it reads “activated”.

> Each datacenter is activated once; datacenters don’t share data.`,
    },
    {
      id: 'storage',
      category: 'data',
      title: 'File storage',
      summary: 'Upload and manage files, 20 GB free, resumable uploads.',
      body: `Drag files or folders into Personal center → File storage. Large files upload in resumable chunks. Every account has 20 GB free.`,
    },
    {
      id: 'faq',
      category: 'faq',
      title: 'FAQ',
      summary: 'Charges when stopped, low balance, busy GPUs, data after release.',
      body: `### Am I charged when an instance is stopped?

No GPU charges; extra data disk space is still billed daily. Instances stopped for 15 days are released.

### Starting fails: not enough GPUs?

The host’s GPUs are rented. Retry later, start in no-GPU mode, or clone to another host.

### What if my balance runs out?

Running pay-as-you-go instances stop; data is kept. Top up and start again.

### Can released data be recovered?

No. Back up before release.`,
    },
  ],
} satisfies Dict<typeof zh>;
