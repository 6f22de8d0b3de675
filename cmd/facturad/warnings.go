package main

import (
	"fmt"

	"facturad/tenant"
)

// warning is something the service starts with that its operator should
// know: a trial setting, a missing one that leaves something unprotected.
// Like a problem's, its message names every setting as the operator gave
// it (Config.name).
type warning struct {
	// setting is the setting the warning is about, the first its message
	// names, as the log's "setting" key carries it: its name in the
	// table ("webhook_allow_private"), the same however it was given, so
	// that a query over the log does not depend on it.
	setting string
	msg     string
	// attrs are the warning's other log keys and values.
	attrs []any
}

// warnings lists what the configuration starts the service with that its
// operator should know, each message naming the settings as they were
// given (Config.name). The start logs them at warn (wiring.warnSettings).
func (c Config) warnings() []warning {
	var ws []warning
	if c.DatabaseURL != "" && c.RedisURL == "" {
		// Replicas sharing PostgreSQL without Redis each cache alone: a
		// deactivation reaches the others only when their entries expire.
		ws = append(ws, warning{
			setting: "database_url",
			msg: fmt.Sprintf("%s is set without %s: credential caches, rate limits and deactivations are per replica; set %[2]s when running more than one replica",
				c.name("database_url"), c.name("redis_url")),
			attrs: []any{"auth_ttl_s", tenant.DefaultAuthTTL.Seconds()},
		})
	}
	if c.privateWebhooks() {
		ws = append(ws, warning{
			setting: "webhook_allow_private",
			msg: fmt.Sprintf("webhooks may call loopback and private addresses (%s, a trial setting): never on a service that companies you do not control can reach",
				c.name("webhook_allow_private")),
		})
	}
	if c.TLSCertFile == "" && !loopbackAddr(c.Listen) && c.TrustedProxies == "" {
		// Credentials would cross the network in clear text, unless a
		// proxy the service was not told about ends TLS.
		ws = append(ws, warning{
			setting: "listen",
			msg: fmt.Sprintf("the API serves plain HTTP beyond loopback (%s=%s): Basic credentials and API tokens travel in clear text; set %s and %s, or end TLS at a proxy and name it in %s",
				c.name("listen"), c.Listen, c.name("tls_cert_file"), c.name("tls_key_file"), c.name("trusted_proxies")),
			attrs: []any{"listen", c.Listen},
		})
	}
	if c.answersUnanchored() {
		ws = append(ws, warning{
			setting: "hacienda_trust_bundle",
			msg: fmt.Sprintf("no trust bundle for the tax authority's answers (the sandbox at %s): their signatures are checked, their signer is not (set %s)",
				c.name("hacienda_api_url"), c.name("hacienda_trust_bundle")),
		})
	}
	return ws
}

// privateWebhooks reports whether webhooks may call loopback and private
// addresses: with webhook_allow_private, in the sandbox environment only
// (Validate refuses it elsewhere).
func (c Config) privateWebhooks() bool {
	return c.HaciendaEnv == "sandbox" && c.WebhookAllowPrivate
}

// answersUnanchored reports whether the tax authority's signed answers
// are checked against no authority: no hacienda_trust_bundle, and a
// sandbox that is not the built-in one (whose answers' certificate the
// service knows), where no national PKI applies (defaultAnswerTrust).
func (c Config) answersUnanchored() bool {
	return c.HaciendaTrust == "" && c.HaciendaEnv == "sandbox" && !builtInSandbox(c)
}

// warnSettings logs the configuration's warnings at warn, each with the
// setting it is about under "setting".
func (w *wiring) warnSettings() {
	for _, ws := range w.c.warnings() {
		w.log.Warn(ws.msg, append([]any{"setting", ws.setting}, ws.attrs...)...)
	}
}
