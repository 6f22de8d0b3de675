// Package archivetest gives the archive's tests a real S3-compatible
// object store: the one deploy/test.sh started (TEST_S3_URL and its keys),
// or a SeaweedFS of a test's own (TEST_WEED_BIN) that the test can stop
// and start again.
package archivetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"facturad/deploy/testenv"
	"facturad/tenant/archive"
)

// Config is the object store deploy/test.sh started, with a prefix of the
// test's own and its bucket made; the test is skipped when there is none.
func Config(t testing.TB) archive.Config {
	t.Helper()
	raw := os.Getenv("TEST_S3_URL")
	if raw == "" {
		testenv.MissingBuilt(t, "TEST_S3_URL, an S3-compatible store (SeaweedFS),")
	}
	c, err := archive.ParseURL(raw)
	if err != nil {
		t.Fatalf("TEST_S3_URL: %v", err)
	}
	c.AccessKey, c.SecretKey = os.Getenv("TEST_S3_ACCESS_KEY"), os.Getenv("TEST_S3_SECRET_KEY")
	c.Prefix = c.Prefix + "/" + t.Name() + "-" + randomHex(4)
	MakeBucket(t, c)
	return c
}

// MakeBucket creates c's bucket unless it exists.
func MakeBucket(t testing.TB, c archive.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mc, err := minio.New(hostOf(c.Endpoint), &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Region: c.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range 100 { // a store just started may not take buckets yet
		ok, err := mc.BucketExists(ctx, c.Bucket)
		if err == nil && ok {
			return
		}
		if err == nil {
			if err = mc.MakeBucket(ctx, c.Bucket, minio.MakeBucketOptions{Region: c.Region}); err == nil {
				return
			}
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("make bucket %s: %v", c.Bucket, lastErr)
}

func hostOf(endpoint string) string {
	if i := len("http://"); len(endpoint) > i && endpoint[:i] == "http://" {
		return endpoint[i:]
	}
	return endpoint
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Weed is a SeaweedFS server of one test's own, on loopback ports, with
// its data in the test's temporary folder.
type Weed struct {
	t       testing.TB
	bin     string
	dir     string
	ports   [4]int
	cmd     *exec.Cmd
	done    chan struct{}
	Config  archive.Config
	secret  string
	started bool
}

// StartWeed starts a SeaweedFS with TEST_WEED_BIN (skipping the test
// without it) and makes its bucket; it is stopped when the test ends.
func StartWeed(t testing.TB) *Weed {
	t.Helper()
	bin := os.Getenv("TEST_WEED_BIN")
	if bin == "" {
		testenv.MissingBuilt(t, "TEST_WEED_BIN, SeaweedFS's weed command,")
	}
	w := &Weed{t: t, bin: bin, dir: t.TempDir(), secret: randomHex(16)}
	for i := range w.ports {
		w.ports[i] = freePort(t)
	}
	ident := fmt.Sprintf(`{"identities":[{"name":"t","credentials":[{"accessKey":"test","secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, w.secret)
	if err := os.WriteFile(filepath.Join(w.dir, "s3.json"), []byte(ident), 0o600); err != nil {
		t.Fatal(err)
	}
	w.Config = archive.Config{Bucket: "facturad", Prefix: "e2e", Endpoint: "http://127.0.0.1:" + strconv.Itoa(w.ports[0]),
		Region: "us-east-1", AccessKey: "test", SecretKey: w.secret}
	t.Cleanup(w.Stop)
	w.Start()
	MakeBucket(t, w.Config)
	return w
}

// URL is the server's FACTURAD_ARCHIVE_URL.
func (w *Weed) URL() string {
	return "s3://" + w.Config.Bucket + "/" + w.Config.Prefix + "?endpoint=" + w.Config.Endpoint + "&region=" + w.Config.Region
}

// Start starts the server (again, on the same ports and data) and waits
// for its S3 port.
func (w *Weed) Start() {
	w.t.Helper()
	if w.started {
		return
	}
	p := w.ports
	w.cmd = exec.Command(w.bin, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir="+w.dir,
		"-master.port="+strconv.Itoa(p[1]), "-master.port.grpc="+strconv.Itoa(p[1]+1), "-master.volumeSizeLimitMB=64",
		"-volume.port="+strconv.Itoa(p[2]), "-volume.port.grpc="+strconv.Itoa(p[2]+1), "-volume.max=20",
		"-filer.port="+strconv.Itoa(p[3]), "-filer.port.grpc="+strconv.Itoa(p[3]+1),
		"-s3", "-s3.port="+strconv.Itoa(p[0]), "-s3.config="+filepath.Join(w.dir, "s3.json"))
	logf, err := os.OpenFile(filepath.Join(w.dir, "weed.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	w.cmd.Stdout, w.cmd.Stderr = logf, logf
	if err := w.cmd.Start(); err != nil {
		w.t.Fatalf("start weed: %v", err)
	}
	w.started = true
	w.done = make(chan struct{})
	go func() { _ = w.cmd.Wait(); logf.Close(); close(w.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p[0]), time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-w.done:
			log, _ := os.ReadFile(filepath.Join(w.dir, "weed.log"))
			w.t.Fatalf("weed exited:\n%s", log)
		case <-time.After(100 * time.Millisecond):
		}
	}
	w.t.Fatal("weed's S3 port did not open within 60s")
}

// Stop stops the server and waits for it to exit.
func (w *Weed) Stop() {
	if !w.started {
		return
	}
	w.started = false
	_ = w.cmd.Process.Signal(os.Interrupt)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// Kill kills the server at once (SIGKILL: no goodbye to its clients, as a
// crash or a lost machine) and waits for it to exit; Start starts it again
// on the same ports and data.
func (w *Weed) Kill() {
	if !w.started {
		return
	}
	w.started = false
	_ = w.cmd.Process.Kill()
	<-w.done
}

func freePort(t testing.TB) int {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p < 65000 {
			return p
		}
	}
}
