-- A received document keeps the XAdES signature policy its supplier's
-- signature commits to (its xades:SigPolicyId/Identifier, a resolution's
-- URL as written), so that which policy each supplier signed under can be
-- audited: suppliers' signers commit to the v4.1, v4.3 or v4.4 resolution,
-- or to none (XAdES-BES). Empty for none, and for the documents received
-- before it was kept. Written when the message is numbered and never
-- changed.
ALTER TABLE received_documents ADD COLUMN firma_politica TEXT NOT NULL DEFAULT '';
