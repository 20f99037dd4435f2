// The role table's place in docs/api.md: between two markers, rendered from src/api/key-roles.ts.
// `npm run docs:roles` rewrites it; test/unit/api/key-roles.test.ts fails when it drifts.

import { roleTableMarkdown } from './key-roles.ts';

export const ROLE_TABLE_DOC = 'docs/api.md';
export const BEGIN = '<!-- role table: generated from src/api/key-roles.ts by `npm run docs:roles` -->';
export const END = '<!-- end of role table -->';

/** The document with its role table replaced; throws when the markers are missing. */
export function withRoleTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${ROLE_TABLE_DOC} has no role table markers (${BEGIN} … ${END})`);
  return `${doc.slice(0, start)}${BEGIN}\n${roleTableMarkdown()}\n${doc.slice(end)}`;
}
