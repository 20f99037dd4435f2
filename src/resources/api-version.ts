// The API's versions by date, oldest first (docs/changelog.md says what each changed). The API
// answers in one of them (src/api/api-versions.ts); merchant events carry the merchant's pinned one.

export const API_VERSIONS = ['2026-12-01'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const LATEST_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1]!;

export function isApiVersion(v: string): v is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(v);
}
