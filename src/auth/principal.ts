export const Scope = {
  postsRead: 'posts:read',
  postsWrite: 'posts:write',
  eventsRead: 'events:read',
  admin: 'admin',
} as const;

export type ScopeName = (typeof Scope)[keyof typeof Scope];

export const ALL_SCOPES: readonly ScopeName[] = [Scope.postsRead, Scope.postsWrite, Scope.eventsRead, Scope.admin];

// What each scope grants beyond itself: admin can do everything, and a writer can read what it writes.
const IMPLIED: Record<ScopeName, readonly ScopeName[]> = {
  [Scope.admin]: [Scope.postsWrite, Scope.postsRead, Scope.eventsRead],
  [Scope.postsWrite]: [Scope.postsRead],
  [Scope.postsRead]: [],
  [Scope.eventsRead]: [],
};

/** Who is calling: an API key or the subject of an OAuth 2.0 access token. */
export interface Principal {
  /** Stable, unique across kinds: `api-key:42` or `oauth:<sub>`. Recorded as the owner of what it creates. */
  id: string;
  kind: 'api-key' | 'oauth';
  scopes: ReadonlySet<ScopeName>;
}

export function isScopeName(value: string): value is ScopeName {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

/** The granted scopes with everything they imply; unknown scope names are ignored. */
export function effectiveScopes(granted: Iterable<string>): Set<ScopeName> {
  const scopes = new Set<ScopeName>();
  for (const scope of granted) {
    if (!isScopeName(scope)) continue;
    scopes.add(scope);
    IMPLIED[scope].forEach((implied) => scopes.add(implied));
  }
  return scopes;
}

export function isAdmin(principal: Principal): boolean {
  return principal.scopes.has(Scope.admin);
}
