import { describe, expect, it } from 'vitest';
import { afterLoginPath, guardRedirect, homePathFor } from './guards.ts';

const base = { htmlStyle: 0, restricted: false, signedIn: false };

describe('guards', () => {
  it('maps html_style to the home path', () => {
    expect([0, 1, 2, 7].map(homePathFor)).toEqual(['/page', '/pagehome', '/pagehtml', '/pagehtml']);
  });

  it('sends every home path and / to the tenant home', () => {
    expect(guardRedirect({ ...base, pathname: '/' })).toBe('/page');
    expect(guardRedirect({ ...base, pathname: '/pagehome' })).toBe('/page');
    expect(guardRedirect({ ...base, htmlStyle: 1, pathname: '/page' })).toBe('/pagehome');
    expect(guardRedirect({ ...base, htmlStyle: 2, pathname: '/pagehome/' })).toBe('/pagehtml');
    expect(guardRedirect({ ...base, htmlStyle: 1, pathname: '/pagehome' })).toBeNull();
  });

  it('lets signed-out visitors reach only home, /login and /register', () => {
    expect(guardRedirect({ ...base, pathname: '/login' })).toBeNull();
    expect(guardRedirect({ ...base, pathname: '/register' })).toBeNull();
    expect(guardRedirect({ ...base, pathname: '/center/home', search: '?a=1' })).toBe('/login?redirect=%2Fcenter%2Fhome%3Fa%3D1');
    expect(guardRedirect({ ...base, pathname: '/help' })).toBe('/login?redirect=%2Fhelp');
    expect(guardRedirect({ ...base, signedIn: true, pathname: '/help' })).toBeNull();
  });

  it('sends a restricted tenant from help and model square to /contact', () => {
    const r = { ...base, restricted: true, signedIn: true };
    expect(guardRedirect({ ...r, pathname: '/help' })).toBe('/contact');
    expect(guardRedirect({ ...r, pathname: '/largeModel/modelSquare' })).toBe('/contact');
    expect(guardRedirect({ ...r, pathname: '/helpdesk' })).toBeNull();
    expect(guardRedirect({ ...r, restricted: false, pathname: '/help' })).toBeNull();
  });

  it('sends signed-in users away from the sign-in pages', () => {
    expect(guardRedirect({ ...base, signedIn: true, pathname: '/login' })).toBe('/center/home');
  });

  it('only follows local redirect targets after sign-in', () => {
    expect(afterLoginPath('?redirect=%2Fhelp')).toBe('/help');
    expect(afterLoginPath('?redirect=https%3A%2F%2Fevil.example')).toBe('/center/home');
    expect(afterLoginPath('?redirect=%2F%2Fevil.example')).toBe('/center/home');
    expect(afterLoginPath('?redirect=%2Flogin')).toBe('/center/home');
    expect(afterLoginPath('')).toBe('/center/home');
  });
});
