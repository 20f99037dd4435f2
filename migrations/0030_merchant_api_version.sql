-- The API version a merchant is pinned to (switchyard merchants set-version); null: the latest.
-- Requests may name another with the Switchyard-Version header; merchant events carry the pinned one.
ALTER TABLE merchants ADD COLUMN api_version text;
