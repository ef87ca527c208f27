import { matchRoutes } from 'react-router';
import { routes, type AppHandle } from '../routes.tsx';

/** True when the route table has a page for `path` (not the 404 catch-all): menus show only what exists. */
export function isRouteAvailable(path: string): boolean {
  const matches = matchRoutes(routes, path);
  const last = matches?.[matches.length - 1];
  return Boolean(last && (last.route.handle as AppHandle | undefined)?.name !== 'notFound');
}
