import { useSyncExternalStore } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { guardRedirect } from '../guards.ts';
import { getToken, onTokenChange } from '../api/session.ts';
import { useTenant } from './tenant.tsx';

/** Applies SPEC §2 Guards before any page renders, so a guarded page never flashes. */
export function RouteGuard() {
  const tenant = useTenant();
  const location = useLocation();
  const signedIn = useSyncExternalStore(onTokenChange, () => Boolean(getToken()));
  const to = guardRedirect({
    pathname: location.pathname,
    search: location.search,
    htmlStyle: tenant.html_style,
    restricted: tenant.config.restricted,
    signedIn,
  });
  return to ? <Navigate to={to} replace /> : <Outlet />;
}
