// ${ENV_VAR} and ${ENV_VAR:-default} in config string values: secrets come from the environment.
// Interpolation runs on parsed values, so a secret with YAML-special characters cannot change the structure.

export interface InterpolationError {
  readonly path: string;
  readonly message: string;
}

const PATTERN = /\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolate(value: unknown, env: Readonly<Record<string, string | undefined>>, path: string[] = [], errors: InterpolationError[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(PATTERN, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      errors.push({ path: path.join('.') || '(root)', message: `environment variable ${name} is not set and has no default` });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...path, String(i)], errors));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, [...path, k], errors);
    return out;
  }
  return value;
}
