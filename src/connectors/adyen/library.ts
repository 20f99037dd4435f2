// The official library is CommonJS whose index re-exports are not visible to Node's ESM named-import
// detection, so it is imported once here, as a default, and re-exported by name.

import adyen from '@adyen/api-library';

export const { CheckoutAPI, Client, EnvironmentEnum, HttpURLConnectionClient, hmacValidator } = adyen;
export type AdyenClient = InstanceType<typeof adyen.Client>;
export type AdyenCheckout = InstanceType<typeof adyen.CheckoutAPI>;
export type { Types as AdyenTypes } from '@adyen/api-library';
