// Log lines never carry card numbers, API keys or provider secrets, whatever an error message
// happens to contain (a driver error can quote query parameters).

const PATTERNS: readonly [RegExp, string][] = [
  [/\b\d{12,19}\b/g, '[card]'],
  [/\b(sy_live|sk_sy|sk_live|sk_test|rk_live|rk_test|whsec)_[A-Za-z0-9_-]+/g, '[secret]'],
  [/Bearer\s+\S+/gi, 'Bearer [secret]'],
  [/(postgres(?:ql)?|redis|rediss):\/\/([^:@/\s]+):[^@/\s]+@/gi, '$1://$2:***@'],
];

export function redact(line: string): string {
  let out = line;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
