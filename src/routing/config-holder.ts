// Holds the current config snapshot and swaps it atomically on reload (file change or SIGHUP).
// An invalid file is rejected with every problem, and the old snapshot keeps serving; so is a file
// that adds or changes connector accounts (restart-needs.ts). Every outcome is kept for /readyz
// and the metrics, and a rejection is logged at error.
//
// The watch is on the file's directory, not the file: an atomic replace (mv, sed -i, editors,
// Kubernetes ConfigMaps swapping a symlink) gives the path a new inode, and a watch on the old one
// would never fire again. A slow tick re-reads the file's digest as well (a missed event costs at
// most one tick) and checks that the directory watched is still the one at that path: a directory
// removed or replaced is logged as a lost watch and watched again once it is back.

import { readFileSync, statSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { loadConfigFile, textDigest } from './config-loader.ts';
import type { ConfigProblem, LoadResult } from './config-loader.ts';
import type { SwitchyardConfig } from './config-schema.ts';
import { restartNeeds } from './restart-needs.ts';
import type { RoutingSnapshot } from './snapshot.ts';

export interface ConfigState {
  readonly config: SwitchyardConfig;
  readonly snapshot: RoutingSnapshot;
}

export type ReloadOutcome =
  | { readonly kind: 'swapped'; readonly from: string; readonly to: string }
  | { readonly kind: 'unchanged'; readonly version: string }
  | { readonly kind: 'rejected'; readonly problems: readonly ConfigProblem[] };

export type ReloadTrigger = 'file' | 'signal' | 'call';

export interface ReloadRecord {
  readonly result: ReloadOutcome['kind'];
  readonly trigger: ReloadTrigger;
  readonly at: Date;
  readonly problems: readonly ConfigProblem[];
}

export interface ConfigStatus {
  readonly file: string;
  /** The snapshot served. */
  readonly snapshot: string;
  /** When the file was last read and accepted (at start, or a reload that swapped or found it unchanged). */
  readonly loadedAt: Date;
  readonly lastReload: ReloadRecord | null;
}

/** Whether the file on disk is the one the served snapshot came from. */
export type DiskState = { readonly state: 'same' } | { readonly state: 'differs' } | { readonly state: 'unreadable'; readonly reason: string };

export interface HolderLog {
  info(line: string): void;
  error(line: string): void;
}

export interface HolderOptions {
  readonly load?: (file: string) => LoadResult;
  /** A bare function takes every line (tests); a logger gets rejections and lost watches at error. */
  readonly log?: ((line: string) => void) | HolderLog;
  readonly now?: () => Date;
  /** How often the watch checks its directory and the file's digest (default 2 s). */
  readonly checkMs?: number;
}

function holderLog(log: HolderOptions['log']): HolderLog {
  if (log === undefined) return { info: (l) => console.error(l), error: (l) => console.error(l) };
  if (typeof log === 'function') return { info: log, error: log };
  return log;
}

function fileDigest(file: string): string | null {
  try {
    return textDigest(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

interface Armed {
  readonly watcher: FSWatcher;
  readonly dev: number;
  readonly ino: number;
}

export class ConfigHolder {
  private state: ConfigState;
  /** Digest of the text the served snapshot was loaded from (or last found equivalent to it). */
  private loadedDigest: string;
  private loadedAt: Date;
  /** Digest of the text the last reload read, accepted or not: the same bytes are not reloaded twice by the watch. */
  private seenDigest: string | null;
  private last: ReloadRecord | null = null;
  private armed: Armed | null = null;
  private watching = false;
  private lost = false;
  private debounce: NodeJS.Timeout | null = null;
  private tick: NodeJS.Timeout | null = null;
  private readonly listeners: ((s: ConfigState) => void)[] = [];
  private readonly reloadListeners: ((o: ReloadOutcome) => void)[] = [];
  private readonly onSighup = (): void => void this.reload('signal');
  private readonly log: HolderLog;
  private readonly now: () => Date;
  private readonly checkMs: number;

  private constructor(
    readonly file: string,
    initial: Extract<LoadResult, { ok: true }>,
    /** The config the process started its connector accounts from: a reload may not add to or change them. */
    private readonly started: SwitchyardConfig,
    private readonly load: (file: string) => LoadResult,
    opts: HolderOptions,
  ) {
    this.state = { config: initial.config, snapshot: initial.snapshot };
    this.log = holderLog(opts.log);
    this.now = opts.now ?? (() => new Date());
    this.checkMs = opts.checkMs ?? 2_000;
    this.loadedDigest = initial.digest;
    this.seenDigest = initial.digest;
    this.loadedAt = this.now();
  }

  /** Loads the file once; a bad file at start is an error for the caller to report. */
  static open(file: string, opts: HolderOptions = {}): ConfigHolder | Extract<LoadResult, { ok: false }> {
    const load = opts.load ?? ((f: string) => loadConfigFile(f));
    const r = load(file);
    if (!r.ok) return r;
    return new ConfigHolder(file, r, r.config, load, opts);
  }

  current(): ConfigState {
    return this.state;
  }

  status(): ConfigStatus {
    return { file: this.file, snapshot: this.state.snapshot.version, loadedAt: this.loadedAt, lastReload: this.last };
  }

  /** Reads the file now: `differs` when it is not the text the served snapshot came from (an edit not yet applied, or refused). */
  async diskState(): Promise<DiskState> {
    try {
      return textDigest(await readFile(this.file, 'utf8')) === this.loadedDigest ? { state: 'same' } : { state: 'differs' };
    } catch (err) {
      return { state: 'unreadable', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
    }
  }

  onChange(listener: (s: ConfigState) => void): void {
    this.listeners.push(listener);
  }

  /** Every reload's outcome (metrics). */
  onReload(listener: (o: ReloadOutcome) => void): void {
    this.reloadListeners.push(listener);
  }

  reload(trigger: ReloadTrigger = 'call'): ReloadOutcome {
    this.seenDigest = fileDigest(this.file);
    const outcome = this.apply(this.load(this.file));
    this.last = { result: outcome.kind, trigger, at: this.now(), problems: outcome.kind === 'rejected' ? outcome.problems : [] };
    for (const l of this.reloadListeners) l(outcome);
    return outcome;
  }

  private apply(r: LoadResult): ReloadOutcome {
    const from = this.state.snapshot.version;
    const problems = r.ok ? restartNeeds(this.started, r.config) : r.problems;
    if (!r.ok || problems.length > 0) {
      this.log.error(`config reload rejected; still serving ${from}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
      return { kind: 'rejected', problems };
    }
    this.loadedDigest = r.digest;
    this.loadedAt = this.now();
    if (r.snapshot.version === from) {
      this.log.info(`config reload: ${this.file} unchanged (routing snapshot ${from})`);
      return { kind: 'unchanged', version: from };
    }
    this.state = { config: r.config, snapshot: r.snapshot };
    this.log.info(`config reloaded: routing snapshot ${from} -> ${r.snapshot.version}`);
    for (const l of this.listeners) l(this.state);
    return { kind: 'swapped', from, to: r.snapshot.version };
  }

  /** Reload on file change (debounced) and on SIGHUP. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.arm();
    this.tick = setInterval(() => this.check(), this.checkMs);
    this.tick.unref();
    process.on('SIGHUP', this.onSighup);
  }

  close(): void {
    this.watching = false;
    this.disarm();
    if (this.tick !== null) clearInterval(this.tick);
    if (this.debounce !== null) clearTimeout(this.debounce);
    this.tick = null;
    this.debounce = null;
    process.off('SIGHUP', this.onSighup);
  }

  private arm(): boolean {
    const dir = dirname(this.file);
    try {
      const { dev, ino } = statSync(dir);
      // The file's own name (a rename over it included), or Kubernetes' `..data` symlink swapped beside it;
      // other files in the directory (a run directory's logs) are not this one's business.
      const name = basename(this.file);
      const watcher = watch(dir, { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name || changed.startsWith('..')) this.soon();
      });
      watcher.on('error', (err) => this.lose(`watcher error: ${err.message}`));
      this.armed = { watcher, dev, ino };
      if (this.lost) {
        this.lost = false;
        this.log.info(`config watch on ${dir} re-armed`);
      }
      return true;
    } catch (err) {
      this.lose(`cannot watch it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      return false;
    }
  }

  private disarm(): void {
    this.armed?.watcher.close();
    this.armed = null;
  }

  private lose(why: string): void {
    this.disarm();
    if (!this.lost) this.log.error(`config watch on ${dirname(this.file)} lost: ${why}; file changes are not seen until it is back (SIGHUP still reloads); retrying every ${this.checkMs} ms`);
    this.lost = true;
  }

  private soon(): void {
    if (this.debounce !== null) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      this.check();
    }, 100);
    this.debounce.unref();
  }

  /** The directory still the one watched (else re-armed), then a reload if the file's bytes changed since the last read. */
  private check(): void {
    if (!this.watching) return;
    const dir = dirname(this.file);
    if (this.armed !== null) {
      let same: boolean;
      let why = '';
      try {
        const s = statSync(dir);
        same = s.dev === this.armed.dev && s.ino === this.armed.ino;
        if (!same) why = 'the directory was replaced';
      } catch (err) {
        same = false;
        why = `the directory is gone (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
      }
      if (!same) this.lose(why);
    }
    if (this.armed === null && !this.arm()) return;
    // A file that vanished is reloaded once too: the rejection says so at error.
    if (fileDigest(this.file) !== this.seenDigest) this.reload('file');
  }
}
