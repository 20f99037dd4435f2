// Shared sandbox machinery, for provider sandboxes and for whoever composes them.

export type { FaultMode, FaultOp, FaultSpec, SandboxControl, SandboxLedgerEntry, WebhookSettings } from './control.ts';
export { SandboxClock } from './clock.ts';
export { FaultScheduler } from './fault-scheduler.ts';
export type { SandboxFaultMode, SandboxFaultSpec } from './fault-scheduler.ts';
export { ProviderListener } from './provider-listener.ts';
export type { ExecutionOptions, ProviderProtocol, ProviderReply, ProviderRequest } from './provider-listener.ts';
export { WebhookDispatcher } from './webhook-dispatcher.ts';
export type { DeliveryRecord, OutgoingEvent, WebhookTarget } from './webhook-dispatcher.ts';
export { createControlRouter } from './control-router.ts';
export { startControlServer } from './control-server.ts';
export type { ControlServer, ControlServerOptions } from './control-server.ts';
