// One line per provider type. Adding a provider is adding its folder and one line here.

import type { Connector, ConnectorAccountConfig, ConnectorFactory, PaymentToken } from './contract.ts';
import { ConnectorConfigError } from './contract.ts';
import { adyenConnectorFactory } from './adyen/connector.ts';
import { stripeConnectorFactory } from './stripe/connector.ts';

export const CONNECTOR_FACTORIES: Readonly<Record<string, ConnectorFactory>> = Object.freeze({
  stripe: stripeConnectorFactory,
  adyen: adyenConnectorFactory,
});

export function connectorTypes(): readonly string[] {
  return Object.keys(CONNECTOR_FACTORIES);
}

/** Builds the connector for one configured account; an unknown type or invalid settings throw at load. */
export function createConnector(accountName: string, config: ConnectorAccountConfig): Connector {
  const factory = Object.hasOwn(CONNECTOR_FACTORIES, config.type) ? CONNECTOR_FACTORIES[config.type] : undefined;
  if (factory === undefined) {
    throw new ConnectorConfigError(`connectors.${accountName}.type: unknown connector type "${config.type}" (known: ${connectorTypes().join(', ')})`);
  }
  const connector = factory.create(accountName, config);
  const timeoutMs = config.authenticationTimeoutMs;
  if (timeoutMs === undefined) return connector;
  // The same for every provider (the core reads it from the policy), so it is applied here, not in each factory.
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1_000) {
    throw new ConnectorConfigError(`connectors.${accountName}.authentication.timeout: must be at least 1s`);
  }
  return { ...connector, policy: { ...connector.policy, authenticationTimeoutMs: timeoutMs } };
}

/**
 * Why a connector of this type cannot take the amount (its provider's exponents, currencies.ts),
 * or null; an unknown type can take nothing. The router's check before it chooses.
 */
export function connectorAmountProblem(type: string, amount: number, currency: string): string | null {
  const factory = Object.hasOwn(CONNECTOR_FACTORIES, type) ? CONNECTOR_FACTORIES[type] : undefined;
  return factory === undefined ? `unknown connector type "${type}"` : factory.amountProblem(amount, currency);
}

/** What a token lacks for a connector of this type, or null; an unknown type takes none. */
export function connectorTokenProblem(type: string, token: PaymentToken): string | null {
  const factory = Object.hasOwn(CONNECTOR_FACTORIES, type) ? CONNECTOR_FACTORIES[type] : undefined;
  return factory === undefined ? `unknown connector type "${type}"` : factory.tokenProblem(token);
}

/** Whether connectors of this type take a vaulted card's number; an unknown type takes none. */
export function connectorAcceptsCardData(type: string): boolean {
  const factory = Object.hasOwn(CONNECTOR_FACTORIES, type) ? CONNECTOR_FACTORIES[type] : undefined;
  return factory?.acceptsCardData === true;
}
