// Package archive keeps the settled documents' parts in S3-compatible
// object storage (A.15, docs/design/archive.md): a Client writes and reads
// the objects, Key names them, DocumentParts and ReceivedParts make them of
// a row, and a Reader fills a document or received document whose parts
// the store has dropped from the archive, or fails with a
// *tenant.ArchiveUnavailableError while the archive cannot be read. The
// service wraps its store's whole-row reads with a Reader
// (cmd/facturad/archive.go).
package archive

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Config is FACTURAD_ARCHIVE_URL parsed, with the credentials.
type Config struct {
	Bucket string
	// Prefix starts every key (no leading or trailing slash; may be empty).
	Prefix string
	// Endpoint is the S3 API's URL (scheme and host) for a service that is
	// not AWS; with it the bucket is addressed by path, not by host name.
	Endpoint string
	Region   string
	// AccessKey and SecretKey, when both set, are the credentials; else
	// they come from the AWS environment (AWS_ACCESS_KEY_ID, the shared
	// credentials file, an instance role).
	AccessKey, SecretKey string
}

// ParseURL reads s3://bucket/prefix?endpoint=https://...&region=....
// Errors name the faulty part, never the credentials (the URL carries
// none).
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, errors.New("archive url: not a URL (s3://bucket/prefix?endpoint=...&region=...)")
	}
	if u.Scheme != "s3" {
		return Config{}, fmt.Errorf("archive url: scheme %q, want s3", u.Scheme)
	}
	if u.User != nil {
		return Config{}, errors.New("archive url: carries credentials; set FACTURAD_ARCHIVE_ACCESS_KEY and FACTURAD_ARCHIVE_SECRET_KEY instead")
	}
	if u.Host == "" {
		return Config{}, errors.New("archive url: no bucket")
	}
	c := Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return Config{}, fmt.Errorf("archive url: unknown parameter %q (endpoint, region)", k)
		}
	}
	c.Region = q.Get("region")
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || (eu.Path != "" && eu.Path != "/") || eu.User != nil {
			return Config{}, errors.New("archive url: endpoint must be http(s)://host[:port]")
		}
		c.Endpoint = eu.Scheme + "://" + eu.Host
	}
	return c, nil
}
