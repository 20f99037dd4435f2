// `switchyard routes validate|explain`: the config file checked, and one routing decision
// explained (rule, candidates in order, skipped with why, snapshot version).

import { newId } from '../core/ids.ts';
import { amountProblem, currency as parseCurrency, MoneyError } from '../core/money.ts';
import { formatProblems, loadConfigFile } from '../routing/config-loader.ts';
import type { RoutingSnapshot } from '../routing/snapshot.ts';
import { select } from '../routing/select.ts';
import { CliInputError } from './cli-input-error.ts';

export function validateRoutesCommand(file: string, env: Readonly<Record<string, string | undefined>> = process.env): { ok: boolean; text: string } {
  const r = loadConfigFile(file, env);
  if (!r.ok) return { ok: false, text: formatProblems(r) };
  const s = r.snapshot;
  return { ok: true, text: `${file}: valid — routing snapshot ${s.version}, ${Object.keys(s.connectors).length} connector accounts, ${s.rules.length} rules plus default` };
}

export interface ExplainInput {
  readonly amount: string;
  readonly currency: string;
  readonly country?: string;
  readonly brand?: string;
  readonly merchant?: string;
  readonly paymentId?: string;
  readonly testCard?: string;
  readonly json?: boolean;
}

function snapshotOf(file: string): RoutingSnapshot {
  const r = loadConfigFile(file);
  if (!r.ok) throw new CliInputError(formatProblems(r));
  return r.snapshot;
}

export function explainRouteCommand(file: string, input: ExplainInput): string {
  const amount = Number(input.amount);
  const problem = /^\d+$/.test(input.amount) ? amountProblem(amount) : `amount "${input.amount}" is not an integer number of minor units`;
  if (problem !== null) throw new CliInputError(`--amount: ${problem}`);
  let currency: string;
  try {
    currency = parseCurrency(input.currency);
  } catch (err) {
    if (err instanceof MoneyError) throw new CliInputError(`--currency: ${err.message}`);
    throw err;
  }
  const snapshot = snapshotOf(file);
  // Weighted rules depend on the payment id; a given id makes the explanation reproducible.
  const paymentId = input.paymentId ?? newId('payment');
  // Without a test card, assume the payment carries a token for every account: the question is the rules.
  const tokens = input.testCard === undefined ? Object.fromEntries(Object.keys(snapshot.connectors).map((c) => [c, 'tok'])) : undefined;
  const r = select(snapshot, {
    paymentId, amount, currency, merchantId: input.merchant ?? '', country: input.country, brand: input.brand, tokens, testCard: input.testCard,
  });
  const d = r.decision;
  if (input.json === true) {
    return JSON.stringify({ snapshot: d.snapshot, rule: d.rule, candidates: d.candidates, skipped: d.skipped, payment_id: paymentId, ...(r.ok ? {} : { refused: { code: r.code, message: r.message } }) });
  }
  const skipped = d.skipped.length === 0 ? 'none skipped' : `skipped ${d.skipped.map((s) => `${s.connector} (${s.reason})`).join(', ')}`;
  const refused = r.ok ? '' : `; refused: ${r.message}`;
  return `rule ${d.rule}: candidates ${d.candidates.length === 0 ? '(none)' : d.candidates.join(' -> ')}; ${skipped}; snapshot ${d.snapshot}${refused}`;
}
