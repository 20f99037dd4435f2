// The pure payment core: import from here outside src/core.
export * from './money.ts';
export * from './ids.ts';
export * from './states.ts';
export * from './outcome.ts';
export * from './policy.ts';
export * from './payment.ts';
export * from './inputs.ts';
export * from './effects.ts';
export * from './keys.ts';
export * from './failover.ts';
export { step, newPayment } from './step.ts';
export type { NewPaymentRequest } from './step.ts';
export type { StepEnv, StepResult, IllegalCode } from './draft.ts';
export * from './effect-wanted.ts';
export * from './ledger.ts';
