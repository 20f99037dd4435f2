// The Adyen sandbox's public surface.

export { startAdyenSandbox } from './server.ts';
export type { AdyenSandbox, AdyenSandboxOptions } from './server.ts';
export type { ReportUser } from './report-access.ts';
export type { AdyenWebhookEndpoint, NotificationBatching, NotificationItem } from './notifications.ts';
export { basicAuthorization, notificationBody, notificationSigningString, resignNotificationBody, signNotificationItem } from './notifications.ts';
export { ensureSandboxTlsMaterial, mintSandboxTlsMaterial } from './certificate.ts';
export type { SandboxTlsMaterial } from './certificate.ts';
export { SETTLEMENT_REPORT_COLUMNS } from './settlement-report.ts';
