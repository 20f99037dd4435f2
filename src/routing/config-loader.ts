// Loads and validates the config file. A bad file yields every error with its path and reason.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { accountModeProblems } from './account-modes.ts';
import { configSchema } from './config-schema.ts';
import type { SwitchyardConfig } from './config-schema.ts';
import { interpolate } from './interpolate.ts';
import type { InterpolationError, VariableSources } from './interpolate.ts';
import { liveSecretProblems, variableNote } from './live-secrets.ts';
import { buildSnapshot } from './snapshot.ts';
import type { RoutingSnapshot } from './snapshot.ts';

export const DEFAULT_CONFIG_PATH = 'config/switchyard.yaml';

export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
}

export type LoadResult =
  | {
      readonly ok: true; readonly config: SwitchyardConfig; readonly snapshot: RoutingSnapshot; readonly file: string;
      /** sha256 of the file's text: what /readyz compares the file on disk with. */
      readonly digest: string;
    }
  | { readonly ok: false; readonly file: string; readonly problems: readonly ConfigProblem[] };

export function textDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function configPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.SWITCHYARD_CONFIG ?? DEFAULT_CONFIG_PATH;
}

export function parseConfigText(text: string, file: string, env: Readonly<Record<string, string | undefined>> = process.env): LoadResult {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return { ok: false, file, problems: [{ path: '(file)', message: `not valid YAML: ${(err as Error).message.split('\n')[0]}` }] };
  }
  const interpolationErrors: InterpolationError[] = [];
  const sources: VariableSources = new Map();
  const expanded = interpolate(raw, env, [], interpolationErrors, sources);
  if (interpolationErrors.length > 0) return { ok: false, file, problems: interpolationErrors };
  const parsed = configSchema.safeParse(expanded);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const path = i.path.map(String).join('.') || '(root)';
      return { path, message: `${i.message}${variableNote(path, sources)}` };
    });
    return { ok: false, file, problems };
  }
  // Start, hot reload and `routes validate` all load through here: a live account on a public secret
  // fails all three, and so does an account whose written mode contradicts what it is.
  const problems = [...accountModeProblems(parsed.data), ...liveSecretProblems(parsed.data, sources)];
  if (problems.length > 0) return { ok: false, file, problems };
  return { ok: true, config: parsed.data, snapshot: buildSnapshot(parsed.data), file, digest: textDigest(text) };
}

export function loadConfigFile(file: string, env: Readonly<Record<string, string | undefined>> = process.env): LoadResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { ok: false, file, problems: [{ path: '(file)', message: code === 'ENOENT' ? `config file ${file} does not exist` : `cannot read ${file} (${code})` }] };
  }
  return parseConfigText(text, file, env);
}

export function formatProblems(result: Extract<LoadResult, { ok: false }>): string {
  return result.problems.map((p) => `${result.file}: ${p.path}: ${p.message}`).join('\n');
}
