-- A document's emisor and receptor are now the XML's parties, as the
-- reception API's JSON takes them: in a purchase invoice (document type 08,
-- the clave's digits 30-31) the emisor is the seller and the company that
-- signs it is the receptor. Rows stored before kept the company as emisor;
-- swap them, so that a retried submission names the parties as the tax
-- authority expects.
UPDATE documents
SET emisor_tipo = receptor_tipo, emisor_numero = receptor_numero,
    receptor_tipo = emisor_tipo, receptor_numero = emisor_numero
WHERE substr(clave, 30, 2) = '08' AND receptor_numero <> '';
