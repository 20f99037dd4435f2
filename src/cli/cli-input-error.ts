// Bad input to a CLI command: printed as its message alone, exit code 1.

export class CliInputError extends Error {
  override readonly name = 'CliInputError';
}
