// One set of gateway processes for every planted bug: the bug is chosen per run by a file the
// harness writes (`<runDir>/plant`: a bug's name, or empty for none), not by a restart. Booting an
// API and a worker process took most of each planted run (15-30 s of 20-40 s on two cores).
//
// Where the gateway reads a seam on every use (transition's step and writePayment, the execution
// checks, through the objects it keeps), the seam is a getter that answers the current bug's part
// or undefined, so a run with no bug takes exactly production's paths (transition's one-statement
// write included). Where the gateway takes a seam's function once at start (aroundCall, mapEvent),
// it is a wrapper that calls the current bug's part or what production does without one.

import { readFileSync } from 'node:fs';
import type { GatewaySeams } from '../src/app/runtime.ts';
import type { ExecutionChecks } from '../src/jobs/outbox-processor.ts';
import type { RelaySeams } from '../src/jobs/relay.ts';
import type { TransitionSeams } from '../src/store/transition.ts';
import { actionForEvent } from '../src/webhooks/inbound/event-mapping.ts';
import { isPlantedBug, plantedSeams, PLANTED_BUGS } from './planted-bugs.ts';
import type { PlantedBug } from './planted-bugs.ts';

/** How often the process looks at the file: the harness waits longer than this after writing it. */
export const PLANT_POLL_MS = 100;

/** The bug named in `file` now (null: none, or no file yet). */
export function readPlant(file: string): PlantedBug | null {
  let name: string;
  try {
    name = readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  if (name === '') return null;
  if (!isPlantedBug(name)) throw new Error(`${file}: unknown planted bug ${JSON.stringify(name)}`);
  return name;
}

export function switchableSeams(current: () => PlantedBug | null): GatewaySeams {
  const all = new Map(PLANTED_BUGS.map((b) => [b, plantedSeams(b)] as const));
  const now = (): GatewaySeams => {
    const bug = current();
    return bug === null ? {} : all.get(bug)!;
  };
  // A getter answering undefined reads, for every reader of these objects (`?.`, `??`, `=== undefined`),
  // as the property left out: exactOptionalPropertyTypes cannot say so, hence the casts.
  const transition = {
    get step() {
      return now().transition?.step;
    },
    get writePayment() {
      return now().transition?.writePayment;
    },
  } as TransitionSeams;
  const checks = {
    get keyExpired() {
      return now().checks?.keyExpired;
    },
    get judgeAnswer() {
      return now().checks?.judgeAnswer;
    },
  } as ExecutionChecks;
  const relay = {
    get jobState() {
      return now().relay?.jobState;
    },
  } as RelaySeams;
  return {
    transition,
    checks,
    relay,
    aroundCall: (effect, call) => {
      const around = now().aroundCall;
      return around === undefined ? call() : around(effect, call);
    },
    mapEvent: (payment, account, event) => (now().mapEvent ?? actionForEvent)(payment, account, event),
    cardSent: async (outboxId, card) => {
      await now().cardSent?.(outboxId, card);
    },
  };
}

/** Seams that follow `file`, re-read every PLANT_POLL_MS (the timer does not keep the process up). */
export function seamsFollowing(file: string, log: (line: string) => void): GatewaySeams {
  let bug = readPlant(file);
  setInterval(() => {
    const next = readPlant(file);
    if (next !== bug) log(`planted bug: ${next ?? 'none'}`);
    bug = next;
  }, PLANT_POLL_MS).unref();
  return switchableSeams(() => bug);
}
