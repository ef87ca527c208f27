/** SPEC §3: the session token lives under the key Admin-Token. */
export const TOKEN_KEY = 'Admin-Token';

const listeners = new Set<() => void>();

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string): void {
  localStorage.setItem(TOKEN_KEY, token);
  listeners.forEach((l) => l());
}

export function removeToken(): void {
  localStorage.removeItem(TOKEN_KEY);
  listeners.forEach((l) => l());
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
