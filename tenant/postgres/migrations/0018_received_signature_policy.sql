-- A received document keeps the XAdES signature policy its supplier's
-- signature commits to (its xades:SigPolicyId/Identifier, a resolution's
-- URL as written), so that which policy each supplier signed under can be
-- audited: suppliers' signers commit to the v4.1, v4.3 or v4.4 resolution,
-- or to none (XAdES-BES). Empty for none, and for the documents received
-- before it was kept. Written when the message is numbered and never
-- changed.
--
-- A column with a constant default is added to the catalog only (no row is
-- rewritten), but the change takes a brief exclusive lock on the table,
-- which waits for the statements running on it while the saves queue behind
-- it. As in 0017, it waits 5 s at most: a transaction that holds the table
-- longer makes the migration fail (and its pod try again later) rather
-- than hold back every save.
SET LOCAL lock_timeout = '5s';
ALTER TABLE received_documents ADD COLUMN firma_politica text NOT NULL DEFAULT '';
