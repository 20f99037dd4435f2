// Every row of the connector's error-classification table, driven for real: the sandbox where it
// can (outage, faults, wrong key, concurrent key, bad params), a scripted raw HTTP answer in the
// provider's own format where it cannot. Rows that could hide a charge must say unknown.

import { describe, expect, it } from 'vitest';
import type { CallOutcome } from '../core/outcome.ts';
import { FAILURE_SITUATIONS } from '../connectors/contract.ts';
import type { Connector, ErrorClassificationRow, FailureSituation } from '../connectors/contract.ts';
import { testCardNumber } from '../connectors/test-cards.ts';
import { capture } from './cases-payments.ts';
import { alreadyDoneAfterUnknown } from './cases-already-done.ts';
import { useSandbox } from './context.ts';
import type { KitContext } from './context.ts';
import { authorizePayment, authorizeRequest, keyFor, startResetThenRefuse, startWireStub } from './harness.ts';
import type { ConformanceSandbox, ConformanceSubject } from './subject.ts';

/** Situations in which the request may have been processed: no connector may call them anything but unknown. */
const MUST_BE_UNKNOWN: ReadonlySet<FailureSituation> = new Set(['in_progress', 'server_error', 'connection_reset', 'timeout', 'truncated_body', 'unparseable', 'idempotency_mismatch']);

type Driver<S extends ConformanceSandbox> = (ctx: KitContext<S>, subject: ConformanceSubject<S>) => Promise<CallOutcome>;

/** The authorize call a fault hits: the first call after prepare. */
async function authorizeUnder<S extends ConformanceSandbox>(ctx: KitContext<S>, fault: Parameters<S['scheduleFault']>[0], connector: Connector = ctx.connector): Promise<CallOutcome> {
  await ctx.sandbox.scheduleFault(fault);
  return (await authorizePayment(connector)).outcome;
}

function sandboxDrivers<S extends ConformanceSandbox>(): Partial<Record<FailureSituation, Driver<S>>> {
  return {
    connection_refused: async (ctx) => {
      await ctx.sandbox.outage(60);
      try {
        return (await authorizePayment(ctx.connector)).outcome;
      } finally {
        await ctx.sandbox.outage(0);
      }
    },
    validation: async (ctx) => {
      const p = await authorizePayment(ctx.connector, { amount: 1000 });
      return capture(ctx.connector, p, 5000); // more than was authorized
    },
    authentication: async (ctx) => (await authorizePayment(ctx.connectorWith({ badCredentials: true }))).outcome,
    card_declined: async (ctx) => (await authorizePayment(ctx.connector, { card: testCardNumber('stolen_card') })).outcome,
    idempotency_mismatch: async (ctx) => {
      // Same key, other amount, on the first call of an authorization: what a bug in our key derivation would send.
      const c = ctx.connector;
      const req = authorizeRequest(c);
      const send = (amount: number): Promise<CallOutcome> =>
        c.prepare !== undefined
          ? c.prepare({ ...req, amount, idempotencyKey: keyFor(c, req.paymentId, 'prepare') })
          : c.authorize({ ...req, amount, providerRef: null });
      expect((await send(1000)).kind).toBe('succeeded');
      return send(2000);
    },
    in_progress: async (ctx) => {
      const req = authorizeRequest(ctx.connector);
      await ctx.sandbox.scheduleFault({ op: 'authorize', mode: 'latency', latencyMs: 1500, process: 'after', count: 1 });
      const first = authorizePayment(ctx.connector, req);
      await new Promise((r) => setTimeout(r, 500));
      const second = await authorizePayment(ctx.connector, req);
      expect((await first).outcome.kind).toBe('succeeded');
      return second.outcome;
    },
    server_error: (ctx) => authorizeUnder(ctx, { op: 'authorize', mode: 'error_503', count: 1 }),
    // Every request the SDK makes is reset (stripe-node resends a reset once by itself).
    connection_reset: (ctx, subject) => authorizeUnder(ctx, { op: 'authorize', mode: 'reset_before_processing', count: 1 + (subject.sdkResendsAfterReset ?? 1) }),
    timeout: (ctx) => authorizeUnder(ctx, { op: 'authorize', mode: 'latency', latencyMs: 2500, process: 'before', count: 1 }, ctx.connectorWith({ timeoutMs: 800 })),
    // A void performed, its answer lost and never stored, resent with the same key.
    already_done: async (ctx) => (await alreadyDoneAfterUnknown(ctx, 'void')).resend,
  };
}

async function scripted<S extends ConformanceSandbox>(subject: ConformanceSubject<S>, situation: FailureSituation): Promise<CallOutcome | null> {
  const reply = subject.scriptedReply(situation);
  if (reply === null) return null;
  const stub = await startWireStub(reply, subject.wireTls);
  const connector = subject.makeConnectorAt(stub, { timeoutMs: 2000 });
  try {
    const req = authorizeRequest(connector);
    // Straight to authorize with a made-up reference: the stub answers every path the same way.
    return await connector.authorize({ ...req, providerRef: connector.capabilities.preparesAuthorization ? 'ref_kit_stub' : null });
  } finally {
    await connector.close();
    await stub.close();
  }
}

function expectRow(row: ErrorClassificationRow, o: CallOutcome): void {
  expect(o.kind, `${row.situation}: ${JSON.stringify(o)}`).toBe(row.outcome);
  if (o.kind === 'not_sent' || o.kind === 'unknown') expect(o.reason, row.situation).toBe(row.reason);
  if (o.kind === 'unknown') expect(o.alert === true, `${row.situation} alert`).toBe(row.outcome === 'unknown' && row.alert === true);
}

export function registerClassificationCases<S extends ConformanceSandbox>(subject: ConformanceSubject<S>): void {
  describe('error classification', () => {
    const kit = useSandbox(subject);
    const drivers = sandboxDrivers<S>();

    it('has a row for every failure situation, and every row that may hide a charge says unknown', () => {
      const { connector } = kit();
      const situations = connector.errorClassification.map((r) => r.situation);
      expect([...situations].sort()).toEqual([...FAILURE_SITUATIONS].sort());
      for (const row of connector.errorClassification) {
        if (MUST_BE_UNKNOWN.has(row.situation)) expect(row.outcome, row.situation).toBe('unknown');
      }
    });

    for (const situation of FAILURE_SITUATIONS) {
      it(`row ${situation} holds when driven for real`, async () => {
        const ctx = kit();
        const row = ctx.connector.errorClassification.find((r) => r.situation === situation);
        expect(row, `no row for ${situation}`).toBeDefined();
        if (row === undefined) return;
        const fromStub = await scripted(subject, situation);
        const driver = drivers[situation];
        const outcome = fromStub ?? (driver === undefined ? null : await driver(ctx, subject));
        expect(outcome, `nothing can drive ${situation}: give the subject a scriptedReply for it`).not.toBeNull();
        if (outcome !== null) expectRow(row, outcome);
      });
    }

    it('a reset followed by a refused retry is unknown: only the first attempt may have landed', async () => {
      const stub = await startResetThenRefuse(subject.wireTls);
      const connector = subject.makeConnectorAt(stub);
      try {
        const req = authorizeRequest(connector);
        const o = await connector.authorize({ ...req, providerRef: connector.capabilities.preparesAuthorization ? 'ref_kit_stub' : null });
        expect(o, JSON.stringify(o)).toMatchObject({ kind: 'unknown' });
        expect(stub.hits()).toBe(1);
      } finally {
        await connector.close();
        await stub.close();
      }
    });

  });
}
