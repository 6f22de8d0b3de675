-- One company per taxpayer. The clave of every document carries the
-- issuer's identification and the consecutivo, so two companies with the
-- same identification would hand out the same claves.
CREATE UNIQUE INDEX companies_numero_identificacion ON companies (numero_identificacion);
