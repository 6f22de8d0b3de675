// The TypeScript example of docs/client.md: as a branch's API user, it
// calculates an invoice's amounts, sends it, checks it until the tax
// authority's verdict, and sends a mistaken line to read the 400 as the
// API's Error body. facturad.d.ts is generated from the service's
// /openapi.json by openapi-typescript; openapi-fetch makes the calls.
//
// It reads BASE (the service's address), USUARIO, CONTRASENA and API_TOKEN
// (the branch user's credentials) and ID_EXTERNO (the invoice's own id,
// unique in the branch) from the environment, and prints one line a step.
import createClient from "openapi-fetch";
import type { components, paths } from "./facturad";

type SendDocumentRequest = components["schemas"]["SendDocumentRequest"];
type ApiError = components["schemas"]["Error"];

function env(name: string): string {
	const v = process.env[name];
	if (!v) {
		throw new Error(`${name} is not set`);
	}
	return v;
}

const client = createClient<paths>({
	baseUrl: env("BASE"),
	headers: {
		AuthToken: env("API_TOKEN"),
		Authorization: "Basic " + Buffer.from(`${env("USUARIO")}:${env("CONTRASENA")}`).toString("base64"),
	},
});

// Decimals are sent as strings: the service reads them exactly.
const invoice: SendDocumentRequest = {
	id_externo: env("ID_EXTERNO"),
	tipo_documento: "01",
	condicion_venta: "01",
	receptor: {
		nombre: "Cliente",
		identificacion: { tipo: "01", numero: "109870654" },
		correoElectronico: "cliente@example.com",
	},
	detalleServicio: [
		{
			numeroLinea: 1,
			codigoCABYS: "8314100000000",
			cantidad: "2",
			unidadMedida: "Sp",
			detalle: "Consultoría",
			precioUnitario: "12500.50",
			impuesto: [{ codigo: "01", codigoTarifaIVA: "08", tarifa: "13" }],
		},
	],
	resumenFactura: {
		codigoTipoMoneda: { codigoMoneda: "CRC", tipoCambio: "1" },
		medioPago: [{ tipoMedioPago: "01" }],
	},
};

// isApiError tells the API's Error body (every refusal but a 500) from the
// other bodies an answer outside 2xx may have.
function isApiError(body: unknown): body is ApiError {
	return typeof body === "object" && body !== null && "statusCode" in body && "errors" in body;
}

// failure describes an answer that was not the one expected.
function failure(step: string, status: number, body: unknown): Error {
	return new Error(`${step}: ${status} ${JSON.stringify(body)}`);
}

async function main(): Promise<void> {
	// The amounts, computed by the service without issuing anything.
	const calc = await client.POST("/api/documents/calculate/v4", { body: invoice });
	if (!calc.data) {
		throw failure("calculate", calc.response.status, calc.error);
	}
	console.log(`calculate: totalComprobante ${calc.data.resumenFactura.totalComprobante}`);

	// The invoice, numbered, signed and received by the tax authority (04).
	const sent = await client.POST("/api/documents/v4", { body: invoice });
	if (!sent.data) {
		throw failure("send", sent.response.status, sent.error);
	}
	const clave = sent.data.clave;
	console.log(`sent: clave ${clave} estado ${sent.data.estado}`);

	// Its state, checked with the tax authority until it decided.
	let doc = sent.data;
	for (let i = 0; doc.estado === "04" || doc.estado === "05"; i++) {
		if (i === 120) {
			throw new Error(`check: still ${doc.estado} after 120 tries`);
		}
		await new Promise((resolve) => setTimeout(resolve, 500));
		const checked = await client.PUT("/api/documents/{clave}/v4", { params: { path: { clave } } });
		if (!checked.data) {
			throw failure("check", checked.response.status, checked.error);
		}
		doc = checked.data;
	}
	console.log(`checked: estado ${doc.estado} ${doc.mensaje_hacienda}`);

	// A mistake: a line of quantity 0. Nothing is numbered; the 400's body
	// names the field.
	const mistaken: SendDocumentRequest = {
		...invoice,
		id_externo: invoice.id_externo + "-cero",
		detalleServicio: [{ ...invoice.detalleServicio![0], cantidad: "0" }],
	};
	const refused = await client.POST("/api/documents/v4", { body: mistaken });
	if (refused.response.status !== 400 || !isApiError(refused.error)) {
		throw failure("mistaken send", refused.response.status, refused.error ?? refused.data);
	}
	for (const [field, messages] of Object.entries(refused.error.errors)) {
		console.log(`refused: ${refused.error.statusCode} ${field}: ${messages.join("; ")}`);
	}
}

main().catch((err: unknown) => {
	console.error(err instanceof Error ? err.message : err);
	process.exit(1);
});
