"""The Python example of docs/client.md.

As a branch's API user, it calculates an invoice's amounts, sends it, checks
it until the tax authority's verdict, and sends a mistaken line to read the
400 as the API's Error model. The facturad_client package is generated from
the service's /openapi.json by openapi-generator's python generator.

It reads BASE (the service's address), USUARIO, CONTRASENA and API_TOKEN (the
branch user's credentials) and ID_EXTERNO (the invoice's own id, unique in
the branch) from the environment, and prints one line a step.
"""

import os
import sys
import time
import types

import facturad_client as fc
from facturad_client.rest import ApiException


def api_error(client, exc):
    """The body of a refusal (an ApiException) as the generated Error model."""
    return client.deserialize(types.SimpleNamespace(data=exc.body), "Error")


def invoice(id_externo, cantidad):
    """An invoice of one line; decimals are strings, which the service reads exactly."""
    return fc.SendDocumentRequest(
        id_externo=id_externo,
        tipo_documento="01",
        condicion_venta="01",
        receptor=fc.Receptor(
            nombre="Cliente",
            identificacion=fc.Identificacion(tipo="01", numero="109870654"),
            correo_electronico="cliente@example.com",
        ),
        detalle_servicio=[
            fc.LineaDetalle(
                numero_linea=1,
                codigo_cabys="8314100000000",
                cantidad=cantidad,
                unidad_medida="Sp",
                detalle="Consultoría",
                precio_unitario="12500.50",
                impuesto=[fc.Impuesto(codigo="01", codigo_tarifa_iva="08", tarifa="13")],
            )
        ],
        resumen_factura=fc.ResumenFactura(
            codigo_tipo_moneda=fc.CodigoTipoMoneda(codigo_moneda="CRC", tipo_cambio="1"),
            medio_pago=[fc.MedioPago(tipo_medio_pago="01")],
        ),
    )


def main():
    config = fc.Configuration()
    config.host = os.environ["BASE"]
    config.username = os.environ["USUARIO"]
    config.password = os.environ["CONTRASENA"]
    config.api_key["AuthToken"] = os.environ["API_TOKEN"]
    client = fc.ApiClient(config)
    api = fc.DefaultApi(client)
    request = invoice(os.environ["ID_EXTERNO"], "2")

    # The amounts, computed by the service without issuing anything.
    calc = api.calculate_document(request)
    print("calculate: totalComprobante %s" % calc.resumen_factura.total_comprobante)

    # The invoice, numbered, signed and received by the tax authority (04).
    doc = api.send_document(request)
    print("sent: clave %s estado %s" % (doc.clave, doc.estado))

    # Its state, checked with the tax authority until it decided.
    tries = 0
    while doc.estado in ("04", "05"):
        tries += 1
        if tries > 120:
            sys.exit("check: still %s after 120 tries" % doc.estado)
        time.sleep(0.5)
        doc = api.check_document(doc.clave)
    print("checked: estado %s %s" % (doc.estado, doc.mensaje_hacienda))

    # A mistake: a line of quantity 0. Nothing is numbered; the 400's body
    # names the field.
    try:
        api.send_document(invoice(request.id_externo + "-cero", "0"))
    except ApiException as exc:
        if exc.status != 400:
            raise
        err = api_error(client, exc)
        for field, messages in err.errors.items():
            print("refused: %d %s: %s" % (err.status_code, field, "; ".join(messages)))
    else:
        sys.exit("mistaken send: accepted")


if __name__ == "__main__":
    main()
