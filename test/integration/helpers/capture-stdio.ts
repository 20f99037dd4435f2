// Everything the test process writes to stdout and stderr (a logger that bypasses the runtime's log
// function included), still passed through; vi.restoreAllMocks() in afterAll stops it.
import { vi } from 'vitest';

export function captureStdio(into: string[]): void {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(String(chunk));
      return (original as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
}
