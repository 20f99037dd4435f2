// `npm run docs:roles`: writes the role table into docs/api.md from src/api/key-roles.ts.

import { readFileSync, writeFileSync } from 'node:fs';
import { ROLE_TABLE_DOC, withRoleTable } from './role-table-doc.ts';

writeFileSync(ROLE_TABLE_DOC, withRoleTable(readFileSync(ROLE_TABLE_DOC, 'utf8')));
console.log(`wrote the role table in ${ROLE_TABLE_DOC}`);
