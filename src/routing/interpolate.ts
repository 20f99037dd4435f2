// ${ENV_VAR} and ${ENV_VAR:-default} in config string values: secrets come from the environment.
// Interpolation runs on parsed values, so a secret with YAML-special characters cannot change the structure.

export interface InterpolationError {
  readonly path: string;
  readonly message: string;
}

/** One ${VAR} a value was read from, and whether the variable was unset or empty (so its default applied). */
export interface VariableUse {
  readonly name: string;
  readonly defaulted: boolean;
}

/** Which variables each interpolated value (by dotted path) was read from: later checks name them. */
export type VariableSources = Map<string, readonly VariableUse[]>;

const PATTERN = /\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolate(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: string[] = [],
  errors: InterpolationError[] = [],
  sources: VariableSources = new Map(),
): unknown {
  if (typeof value === 'string') {
    const uses: VariableUse[] = [];
    const out = value.replace(PATTERN, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') {
        uses.push({ name, defaulted: false });
        return v;
      }
      uses.push({ name, defaulted: true });
      if (fallback !== undefined) return fallback;
      errors.push({ path: path.join('.') || '(root)', message: `environment variable ${name} is not set and has no default` });
      return '';
    });
    if (uses.length > 0) sources.set(path.join('.'), uses);
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...path, String(i)], errors, sources));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, [...path, k], errors, sources);
    return out;
  }
  return value;
}
