// `npm run openapi`: writes docs/openapi.json from the schemas.

import { writeFileSync } from 'node:fs';
import { openApiText } from './openapi.ts';

export const OPENAPI_PATH = 'docs/openapi.json';

writeFileSync(OPENAPI_PATH, openApiText());
console.log(`wrote ${OPENAPI_PATH}`);
