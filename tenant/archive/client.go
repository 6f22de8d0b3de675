package archive

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// ErrNoObject is a read of an object that does not exist.
var ErrNoObject = errors.New("archive: no such object")

// Client writes and reads the archive's objects. Its errors name the
// bucket and key, never the credentials.
type Client struct {
	mc     *minio.Client
	bucket string
	prefix string
}

// New makes a client of c. It does not reach the object store: see
// Check.
func New(c Config) (*Client, error) {
	endpoint, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil {
			return nil, errors.New("archive: bad endpoint")
		}
		endpoint, secure, lookup = u.Host, u.Scheme == "https", minio.BucketLookupPath
	}
	var creds *credentials.Credentials
	switch {
	case c.AccessKey != "" && c.SecretKey != "":
		creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	case c.AccessKey != "" || c.SecretKey != "":
		return nil, errors.New("archive: set both FACTURAD_ARCHIVE_ACCESS_KEY and FACTURAD_ARCHIVE_SECRET_KEY, or neither")
	default:
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
		})
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 30 * time.Second
	mc, err := minio.New(endpoint, &minio.Options{
		Creds: creds, Secure: secure, Region: c.Region, BucketLookup: lookup, Transport: tr,
		// A read waits for the caller: it fails fast, the caller's
		// answer (503, a later sweep) is the retry.
		MaxRetries: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return &Client{mc: mc, bucket: c.Bucket, prefix: c.Prefix}, nil
}

// Prefix is the prefix every key starts with.
func (c *Client) Prefix() string { return c.prefix }

// Bucket is the bucket's name.
func (c *Client) Bucket() string { return c.bucket }

// Check reports whether the bucket can be reached and exists.
func (c *Client) Check(ctx context.Context) error {
	ok, err := c.mc.BucketExists(ctx, c.bucket)
	if err != nil {
		return fmt.Errorf("archive: bucket %s: %w", c.bucket, err)
	}
	if !ok {
		return fmt.Errorf("archive: bucket %s does not exist", c.bucket)
	}
	return nil
}

// Get reads the object key of the client's bucket; ErrNoObject when
// there is none.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	return c.get(ctx, c.bucket, key)
}

// get reads the object key of bucket.
func (c *Client) get(ctx context.Context, bucket, key string) ([]byte, error) {
	o, err := c.mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, readErr(bucket, key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		return nil, readErr(bucket, key, err)
	}
	return b, nil
}

func readErr(bucket, key string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("%s/%s: %w", bucket, key, ErrNoObject)
	}
	return fmt.Errorf("archive: read %s/%s: %w", bucket, key, err)
}

// Ensure makes the object key hold exactly data: an object already equal
// is left alone; otherwise data is written with its MD5 (Content-MD5,
// which the object store checks on receipt, refusing bytes that do not
// match) and verified. It returns only once the object is known to hold
// data, so that a caller may forget its own copy.
//
// Verified means: the object's metadata (a HEAD) answers data's size and
// an ETag equal to data's MD5, which S3 and the stores like it give an
// object written whole in one request without KMS or customer-key
// encryption; any other ETag (a multipart upload, such encryption) makes
// the check read the object back and compare its bytes. The same check
// finds an object "already equal" before any write.
func (c *Client) Ensure(ctx context.Context, key string, data []byte) (written bool, err error) {
	return c.ensure(ctx, c.bucket, key, data)
}

func (c *Client) ensure(ctx context.Context, bucket, key string, data []byte) (written bool, err error) {
	sum := md5.Sum(data)
	etag := hex.EncodeToString(sum[:])
	same, err := c.holds(ctx, bucket, key, data, etag)
	if err != nil || same {
		return false, err
	}
	if _, err := c.mc.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{SendContentMd5: true, ContentType: contentType(key)}); err != nil {
		return false, fmt.Errorf("archive: write %s/%s: %w", bucket, key, err)
	}
	same, err = c.holds(ctx, bucket, key, data, etag)
	if err != nil {
		return true, fmt.Errorf("archive: read back %s/%s: %w", bucket, key, err)
	}
	if !same {
		return true, fmt.Errorf("archive: %s/%s does not read back as the %d bytes written", bucket, key, len(data))
	}
	return true, nil
}

// holds reports whether object key of bucket holds data, whose MD5 in hex
// is etag: by its HEAD when its ETag is an MD5, else by its bytes. A
// missing object holds nothing.
func (c *Client) holds(ctx context.Context, bucket, key string, data []byte, etag string) (bool, error) {
	info, err := c.mc.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if errors.Is(readErr(bucket, key, err), ErrNoObject) {
			return false, nil
		}
		return false, readErr(bucket, key, err)
	}
	if info.Size != int64(len(data)) {
		return false, nil
	}
	if strings.EqualFold(strings.Trim(info.ETag, `"`), etag) {
		return true, nil
	}
	have, err := c.get(ctx, bucket, key)
	if errors.Is(err, ErrNoObject) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(have, data), nil
}

func contentType(key string) string {
	if len(key) > 4 && key[len(key)-4:] == ".pdf" {
		return "application/pdf"
	}
	return "application/xml"
}
