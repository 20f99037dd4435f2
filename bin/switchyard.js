#!/usr/bin/env node
// `npx switchyard ...`: registers tsx's loader in this process, then runs the TypeScript CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
