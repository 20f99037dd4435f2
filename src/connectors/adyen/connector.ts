// The Adyen connector: calls the official library (Checkout v72 PaymentsApi / ModificationsApi)
// and translates. It owns no state and no retries (the library has none either). Modifications
// answer `pending`; their results are notifications. An unknown /payments is resolved by the core
// with a same-key replay inside the key retention, or a technical cancel (cancelByReference).

import type { CallOutcome, NotSent } from '../../core/outcome.ts';
import type {
  AuthorizeRequest,
  CancelByReferenceRequest,
  CaptureRequest,
  Connector,
  ConnectorAccountConfig,
  ConnectorFactory,
  DeclineTable,
  ProviderReports,
  QueryRequest,
  ResumeRequest,
  RefundRequest,
  VoidRequest,
} from '../contract.ts';
import { mergeDeclineTable } from '../decline-table.ts';
import type { AdyenConnectorOptions } from './config.ts';
import { parseAdyenAccountConfig } from './config.ts';
import { toAdyenValue } from './currencies.ts';
import { ADYEN_DEFAULT_DECLINES, ADYEN_POLICY } from './defaults.ts';
import { ADYEN_ERROR_CLASSIFICATION, outcomeForFailure } from './error-classification.ts';
import { CheckoutAPI, Client, EnvironmentEnum } from './library.ts';
import { downloadReportFile, recordsFromAccountingReports, settlementLinesFromReports } from './reconciliation.ts';
import type { ReportCredential, ReportSource } from './reconciliation.ts';
import { addDays, parseReportFileName, zoneDayStartMs } from './report-files.ts';
import { readAdyenReturn } from './customer-return.ts';
import { modificationOutcome, paymentOutcome, resumeOutcome } from './status-map.ts';
import { adyenTokenProblem, captureRequest, paymentRequest, refundRequest, resolvePaymentMethod, toAdyenAmount } from './transformers.ts';
import { recordTransport, RedirectingHttpClient } from './transport.ts';
import { announcedReport, verifyAdyenWebhook } from './webhook.ts';
import { adyenDisputeOperations } from './disputes.ts';

export { ReconciliationFetchError, ReportAccessError } from './reconciliation.ts';

export interface AdyenConnectorDeps {
  readonly declineTable?: DeclineTable;
}

function localRefusal(detail: string): NotSent {
  return { kind: 'not_sent', reason: 'local_validation', detail };
}

export function createAdyenConnector(account: string, options: AdyenConnectorOptions, deps: AdyenConnectorDeps = {}): Connector {
  const declineTable = mergeDeclineTable(ADYEN_DEFAULT_DECLINES, deps.declineTable);
  const policy = {
    ...ADYEN_POLICY, keyRetentionMs: options.keyRetentionMs,
    capabilities: { ...ADYEN_POLICY.capabilities, multicapture: options.multicapture, finalCaptureLeavesRemainder: options.multicapture },
  };
  const client = new Client(
    {
      apiKey: options.apiKey,
      environment: options.environment === 'LIVE' ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
      connectionTimeoutMillis: options.timeoutMs,
      applicationName: 'switchyard',
      ...(options.liveEndpointUrlPrefix !== undefined && { liveEndpointUrlPrefix: options.liveEndpointUrlPrefix }),
    },
    new RedirectingHttpClient(options.baseUrl ?? null, options.caPem),
  );
  // The getters build a new service per access; one of each is enough.
  const checkout = new CheckoutAPI(client);
  const payments = checkout.PaymentsApi;
  const modifications = checkout.ModificationsApi;
  const merchantAccount = options.merchantAccount;
  const keyProblem = (key: string): NotSent | null =>
    key.length > policy.maxKeyLength ? localRefusal(`idempotency key longer than ${policy.maxKeyLength} characters`) : null;

  async function authorize(req: AuthorizeRequest): Promise<CallOutcome> {
    const amount = toAdyenAmount(req.amount, req.currency);
    if (!amount.ok) return amount.outcome;
    const method = resolvePaymentMethod(req.paymentMethod, options.sandbox);
    if (!method.ok) return method.outcome;
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const body = paymentRequest(req, amount.value, method.value, merchantAccount, options.returnUrl);
    const call = await recordTransport(() => payments.payments(body, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport);
    return paymentOutcome(call.value, { amount: req.amount, currency: req.currency, reference: req.attemptId }, declineTable);
  }

  /**
   * The shopper is back from the issuer's page: /payments/details with the redirectResult kept from
   * the return, under the resume's own key. Adyen has no lookup here: an unknown answer is resent
   * with the same key and the same redirectResult (or the AUTHORISATION notification settles it).
   */
  async function resume(req: ResumeRequest): Promise<CallOutcome> {
    const redirectResult = req.returned['redirectResult'];
    if (redirectResult === undefined) return localRefusal('the shopper came back without a redirectResult');
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const call = await recordTransport(() => payments.paymentsDetails({ details: { redirectResult } }, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport, req.providerRef ?? undefined);
    return resumeOutcome(call.value, { amount: req.amount, currency: req.currency, reference: req.attemptId }, req.providerRef, declineTable);
  }

  async function capture(req: CaptureRequest): Promise<CallOutcome> {
    const amount = toAdyenAmount(req.amount, req.currency);
    if (!amount.ok) return amount.outcome;
    if (!req.final && !options.multicapture) return localRefusal('multiple partial captures are not enabled for this Adyen account');
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const body = captureRequest(req, amount.value, merchantAccount);
    const call = await recordTransport(() => modifications.captureAuthorisedPayment(req.providerRef, body, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport, req.providerRef);
    return modificationOutcome(call.value, { paymentRef: req.providerRef, amount: req.amount, currency: req.currency });
  }

  async function voidAuthorization(req: VoidRequest): Promise<CallOutcome> {
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const body = { merchantAccount, reference: req.reference ?? req.attemptId };
    const call = await recordTransport(() => modifications.cancelAuthorisedPaymentByPspReference(req.providerRef, body, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport, req.providerRef);
    return modificationOutcome(call.value, { paymentRef: req.providerRef, currency: req.currency });
  }

  async function refund(req: RefundRequest): Promise<CallOutcome> {
    const amount = toAdyenAmount(req.amount, req.currency);
    if (!amount.ok) return amount.outcome;
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const body = refundRequest(req, amount.value, merchantAccount);
    const call = await recordTransport(() => modifications.refundCapturedPayment(req.providerRef, body, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport, req.providerRef);
    return modificationOutcome(call.value, { paymentRef: req.providerRef, amount: req.amount, currency: req.currency });
  }

  /** Technical cancel by our merchant reference: proof only once TECHNICAL_CANCEL success=true arrives. */
  async function cancelByReference(req: CancelByReferenceRequest): Promise<CallOutcome> {
    const tooLong = keyProblem(req.idempotencyKey);
    if (tooLong !== null) return tooLong;
    const body = { merchantAccount, paymentReference: req.attemptId, reference: `fence-${req.attemptId}` };
    const call = await recordTransport(() => modifications.cancelAuthorisedPayment(body, { idempotencyKey: req.idempotencyKey }));
    if (!call.ok) return outcomeForFailure(call.error, call.transport);
    const psp = call.value.pspReference;
    if (typeof psp !== 'string' || psp === '') return { kind: 'unknown', reason: 'unparseable', detail: 'the /cancels answer has no pspReference' };
    if (call.value.paymentReference !== req.attemptId) {
      return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: psp, alert: true, detail: `cancel of ${call.value.paymentReference}, not ${req.attemptId}` };
    }
    const status = String(call.value.status);
    return status === 'received' ? { kind: 'pending', providerRef: psp, providerStatus: status } : { kind: 'unknown', reason: 'unexpected', providerRef: psp, detail: `status ${status}` };
  }

  function query(req: QueryRequest): Promise<CallOutcome> {
    return Promise.resolve({
      kind: 'unknown',
      reason: 'unexpected',
      ...(req.providerRef !== null && { providerRef: req.providerRef }),
      detail: 'Adyen Checkout v72 has no payment lookup: resolve by same-key replay or technical cancel',
    });
  }

  // Reports go to the report service user (Merchant Report Download role); a sandbox account
  // configured without one downloads with the payments key.
  const credential: ReportCredential = options.reportApiKey !== undefined
    ? { kind: 'api_key', apiKey: options.reportApiKey, setting: `connectors.${account}.report_api_key` }
    : options.reportBasicAuth !== undefined
      ? { kind: 'basic_auth', ...options.reportBasicAuth, setting: `connectors.${account}.report_basic_auth` }
      : { kind: 'api_key', apiKey: options.apiKey, setting: `connectors.${account}.api_key (no report_api_key or report_basic_auth configured)` };
  const reportSource: ReportSource = {
    baseUrl: options.reportBaseUrl ?? options.baseUrl ?? (options.environment === 'LIVE' ? 'https://ca-live.adyen.com' : 'https://ca-test.adyen.com'),
    merchantAccount, credential, ca: options.caPem, timeoutMs: options.timeoutMs, zone: options.reportTimeZone,
  };

  const reports: ProviderReports = {
    accepts: (fileName) => announcedReport(fileName).report ?? null,
    download: (fileName) => downloadReportFile(reportSource, fileName),
    records: (texts, window) => recordsFromAccountingReports(texts.filter((r) => parseReportFileName(r.name)?.kind === 'accounting_daily'), window, options.reportTimeZone),
    historyDays: options.reportHistoryDays,
    dayEndMs: (day) => zoneDayStartMs(options.reportTimeZone, addDays(day, 1)),
    missingGraceMs: options.reportMissingGraceHours * 3_600_000,
    settlementLines: (report) => (parseReportFileName(report.name)?.kind === 'settlement_batch' ? settlementLinesFromReports([report], null, options.reportTimeZone) : []),
  };

  const webhookSecrets = { hmacKeys: options.hmacKeys, username: options.webhookUsername, password: options.webhookPassword };
  return {
    type: 'adyen',
    account,
    sandbox: options.sandbox,
    capabilities: policy.capabilities,
    policy,
    errorClassification: ADYEN_ERROR_CLASSIFICATION,
    declineTable,
    reconciliationDelayMs: options.reportDelayMs,
    authorize,
    capture,
    void: voidAuthorization,
    refund,
    query,
    resume,
    readCustomerReturn: readAdyenReturn,
    cancelByReference,
    verifyWebhook: (rawBody, headers, now) => verifyAdyenWebhook(rawBody, headers, webhookSecrets, now, declineTable),
    // No fetchReconciliationRecords / fetchSettlementLines: Adyen's records and settlement rows
    // come only from the reports it announces (`reports`, src/reconcile/provider-reports.ts).
    reports,
    disputes: adyenDisputeOperations(client, merchantAccount),
    close: () => Promise.resolve(), // the library opens a new agent per request (connection: close)
  };
}

export const adyenConnectorFactory: ConnectorFactory = {
  type: 'adyen',
  amountProblem(amount, currency) {
    const wire = toAdyenValue(amount, currency);
    return wire.ok ? null : wire.problem;
  },
  tokenProblem: adyenTokenProblem,
  acceptsCardData: true,
  create(account: string, config: ConnectorAccountConfig): Connector {
    const options = parseAdyenAccountConfig(account, config);
    return createAdyenConnector(account, options, config.declineTable !== undefined ? { declineTable: config.declineTable } : {});
  },
};
