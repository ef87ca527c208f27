/** SPEC §2 Guards: where a path goes, given the tenant and whether a session token exists. */

export const HOME_PATHS = ['/page', '/pagehome', '/pagehtml'] as const;

/** html_style 0 -> /page, 1 -> /pagehome, anything else -> /pagehtml. */
export function homePathFor(htmlStyle: number): string {
  if (htmlStyle === 0) return '/page';
  if (htmlStyle === 1) return '/pagehome';
  return '/pagehtml';
}

const isHome = (path: string) => (HOME_PATHS as readonly string[]).includes(path);
const AUTH_PATHS = ['/login', '/register'];
/** Routes a restricted tenant sends to /contact (PRODUCT.md: the `restricted` flag). */
const RESTRICTED_PREFIXES = ['/help', '/largeModel/modelSquare'];

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

export type GuardInput = { pathname: string; search?: string; htmlStyle: number; restricted: boolean; signedIn: boolean };

/** The path to redirect to, or null to render the asked one. */
export function guardRedirect({ pathname, search = '', htmlStyle, restricted, signedIn }: GuardInput): string | null {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  const home = homePathFor(htmlStyle);
  if (path === '/' || (isHome(path) && path !== home)) return home;
  if (restricted && RESTRICTED_PREFIXES.some((p) => under(path, p))) return '/contact';
  if (isHome(path)) return null;
  if (AUTH_PATHS.includes(path)) return signedIn ? '/center/home' : null;
  if (!signedIn) return `/login?redirect=${encodeURIComponent(path + search)}`;
  return null;
}

/** Where to go after signing in: the `redirect` query if it is a local path, else the console. */
export function afterLoginPath(search: string): string {
  const target = new URLSearchParams(search).get('redirect');
  return target && target.startsWith('/') && !target.startsWith('//') && !AUTH_PATHS.some((p) => under(target.split('?')[0] ?? '', p)) ? target : '/center/home';
}
