// Holds the current config snapshot and swaps it atomically on reload (file change or SIGHUP).
// An invalid file is rejected with every problem, and the old snapshot keeps serving.

import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { loadConfigFile } from './config-loader.ts';
import type { ConfigProblem, LoadResult } from './config-loader.ts';
import type { SwitchyardConfig } from './config-schema.ts';
import type { RoutingSnapshot } from './snapshot.ts';

export interface ConfigState {
  readonly config: SwitchyardConfig;
  readonly snapshot: RoutingSnapshot;
}

export type ReloadOutcome =
  | { readonly kind: 'swapped'; readonly from: string; readonly to: string }
  | { readonly kind: 'unchanged'; readonly version: string }
  | { readonly kind: 'rejected'; readonly problems: readonly ConfigProblem[] };

export class ConfigHolder {
  private state: ConfigState;
  private watcher: FSWatcher | null = null;
  private readonly listeners: ((s: ConfigState) => void)[] = [];
  private readonly onSighup = (): void => void this.reload();

  private constructor(
    readonly file: string,
    initial: ConfigState,
    private readonly load: (file: string) => LoadResult,
    private readonly log: (line: string) => void,
  ) {
    this.state = initial;
  }

  /** Loads the file once; a bad file at start is an error for the caller to report. */
  static open(file: string, opts: { load?: (file: string) => LoadResult; log?: (line: string) => void } = {}): ConfigHolder | Extract<LoadResult, { ok: false }> {
    const load = opts.load ?? ((f: string) => loadConfigFile(f));
    const r = load(file);
    if (!r.ok) return r;
    return new ConfigHolder(file, { config: r.config, snapshot: r.snapshot }, load, opts.log ?? ((l) => console.error(l)));
  }

  current(): ConfigState {
    return this.state;
  }

  onChange(listener: (s: ConfigState) => void): void {
    this.listeners.push(listener);
  }

  reload(): ReloadOutcome {
    const r = this.load(this.file);
    if (!r.ok) {
      this.log(`config reload rejected; still serving ${this.state.snapshot.version}: ${r.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
      return { kind: 'rejected', problems: r.problems };
    }
    const from = this.state.snapshot.version;
    if (r.snapshot.version === from) return { kind: 'unchanged', version: from };
    this.state = { config: r.config, snapshot: r.snapshot };
    this.log(`config reloaded: routing snapshot ${from} -> ${r.snapshot.version}`);
    for (const l of this.listeners) l(this.state);
    return { kind: 'swapped', from, to: r.snapshot.version };
  }

  /** Reload on file change (debounced) and on SIGHUP. */
  watch(): void {
    if (this.watcher !== null) return;
    let timer: NodeJS.Timeout | null = null;
    this.watcher = watch(this.file, () => {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(() => this.reload(), 100);
    });
    process.on('SIGHUP', this.onSighup);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
    process.off('SIGHUP', this.onSighup);
  }
}
