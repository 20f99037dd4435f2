// The official library, loaded by the parts this gateway uses. Its index requires every service and
// model it has (payouts, terminals, platforms…): importing it cost about 1.1 s of CPU in every process
// that loads a connector (each gateway process, each CLI command, each test file), against 0.2 s
// for the client, the checkout service, the HTTP client and the HMAC validator (docs/testing.md).
// The package has no `exports` map, so its own files are what it publishes; types still come from
// its index (erased at run time). CommonJS, so loaded with require.

import { createRequire } from 'node:module';
import type adyen from '@adyen/api-library';

const require = createRequire(import.meta.url);
const LIB = '@adyen/api-library/lib/src';

export const Client = (require(`${LIB}/client`) as { default: typeof adyen.Client }).default;
export const CheckoutAPI = (require(`${LIB}/services/checkout`) as { default: typeof adyen.CheckoutAPI }).default;
export const DisputesAPI = (require(`${LIB}/services/disputes`) as { default: typeof adyen.DisputesAPI }).default;
export const EnvironmentEnum = (require(`${LIB}/config`) as { EnvironmentEnum: typeof adyen.EnvironmentEnum }).EnvironmentEnum;
export const HttpURLConnectionClient = (require(`${LIB}/httpClient/httpURLConnectionClient`) as { default: typeof adyen.HttpURLConnectionClient }).default;
export const hmacValidator = (require(`${LIB}/utils/hmacValidator`) as { default: typeof adyen.hmacValidator }).default;
export type AdyenClient = InstanceType<typeof adyen.Client>;
export type AdyenCheckout = InstanceType<typeof adyen.CheckoutAPI>;
export type { Types as AdyenTypes } from '@adyen/api-library';
