-- Issue 27: customer authentication (3-D Secure and redirects).
--
-- payments.authentication: the merchant's settings, written at creation and never by a transition
-- ({"mode": "automatic" | "challenge" | "none", "returnUrl": <the merchant's return_url> | null}).
-- NULL on payments created before it existed: automatic, no return URL.
-- payments.shopper: the shopper's browser_info and shopper_ip, forwarded to providers that use
-- them (Adyen web 3-D Secure); written once at creation, like payment_method.
-- payment_attempts.authentication: the attempt's authentication (the provider's redirect action,
-- its expiry, what the customer's browser brought back for the resume call, the resume key, a
-- decline held until a cancel is confirmed). Never Stripe's payment_intent_client_secret.
ALTER TABLE payments ADD COLUMN IF NOT EXISTS authentication jsonb;
ALTER TABLE payments ADD COLUMN IF NOT EXISTS shopper jsonb;
ALTER TABLE payment_attempts ADD COLUMN IF NOT EXISTS authentication jsonb;
