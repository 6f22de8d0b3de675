package api

import "encoding/json"

// Delivery (A.12): a company's webhooks, their delivery log, the body a
// delivery posts, and a document's e-mails.

// WebhookRequest is the body of a webhook create: the address to post to
// and the events it takes.
type WebhookRequest struct {
	URL     string   `json:"url" read:"text"`
	Eventos []string `json:"eventos"`
}

// Webhook is a registered webhook as listed (without its secret).
type Webhook struct {
	ID        int64    `json:"id"`
	URL       string   `json:"url"`
	Eventos   []string `json:"eventos"`
	CreatedAt string   `json:"createdAt"`
}

// WebhookCreated is the answer of a webhook create: the webhook and its
// secret, shown this once, which signs every delivery.
type WebhookCreated struct {
	ID        int64    `json:"id"`
	URL       string   `json:"url"`
	Eventos   []string `json:"eventos"`
	Secreto   string   `json:"secreto"`
	CreatedAt string   `json:"createdAt"`
}

// Delivery is one event delivered, or being delivered, to a webhook: an
// item of its delivery log, whose pages are Page[Delivery].
type Delivery struct {
	ID             int64  `json:"id"`
	EventoID       string `json:"eventoId"`
	Evento         string `json:"evento"`
	Clave          string `json:"clave"`
	Creado         string `json:"creado"`
	Estado         string `json:"estado"` // pendiente, entregado, fallido
	Intentos       int    `json:"intentos"`
	UltimoIntento  string `json:"ultimoIntento"`
	UltimoCodigo   int    `json:"ultimoCodigo"`
	UltimoError    string `json:"ultimoError"`
	ProximoIntento string `json:"proximoIntento"`
	Entregado      string `json:"entregado"`
	Fallido        string `json:"fallido"`
}

// WebhookEvent is the body a delivery posts: the event's id (the same on
// every repeat of it), its name, when it happened and its data, the
// document as the read call answers it (Document for documento.*,
// ReceivedDocument for recibido.*). Its fields and their order are fixed,
// so every attempt of a delivery posts the same bytes.
type WebhookEvent struct {
	ID     string          `json:"id"`
	Evento string          `json:"evento"`
	Creado string          `json:"creado"`
	Data   json.RawMessage `json:"data"`
}

// DocumentEmail is what became of an accepted document's e-mail to its
// receptor.
type DocumentEmail struct {
	Estado         string           `json:"estado"` // pendiente, entregado, fallido
	Destinatarios  []string         `json:"destinatarios"`
	Rechazados     []EmailRejection `json:"rechazados"`
	Intentos       int              `json:"intentos"`
	UltimoIntento  string           `json:"ultimoIntento"`
	UltimoError    string           `json:"ultimoError"`
	ProximoIntento string           `json:"proximoIntento"`
	Enviado        string           `json:"enviado"`
	Fallido        string           `json:"fallido"`
	Creado         string           `json:"creado"`
}

// EmailRejection is an address the mail server refused for good, with its
// answer.
type EmailRejection struct {
	Correo  string `json:"correo"`
	Codigo  int    `json:"codigo"`
	Mensaje string `json:"mensaje"`
}
