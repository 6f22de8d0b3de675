package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// A streamed reply (Reply.Stream) is handed to fasthttp as a body stream
// that writes itself: fasthttp calls its WriteTo on the connection's own
// goroutine once the status and headers are out, framing every write as
// a chunk, and ends the body without its closing chunk (closing the
// connection) when WriteTo fails. So the handler's work continues after
// it returned, outside the route's Timeout, and a failure midway reaches
// the client as a truncated body, never as a complete one.

// streamBufSize is how much a streamed reply gathers before a write to
// the connection (one chunk).
const streamBufSize = 32 << 10

// streamBody is a Reply.Stream as fasthttp takes it.
type streamBody struct {
	s       *Server
	ctx     context.Context // the request id; no deadline, no cancel
	route   string
	reqID   string
	write   func(ctx context.Context, w io.Writer) error
	release func()
	// conn is the client's connection: each write pushes its write
	// deadline WriteTimeout ahead (set from the handler's goroutine,
	// used from fasthttp's, which is the one writing to it).
	conn    net.Conn
	timeout time.Duration
	once    sync.Once
}

var (
	_ fasthttp.BodyWriterTo = (*streamBody)(nil)
	_ io.Closer             = (*streamBody)(nil)
)

var errStreamRead = errors.New("gateway: a streamed reply is written with WriteTo, not read")

// Read is never called: SupportsBodyWriteTo tells fasthttp to call
// WriteTo. A caller that reads anyway gets an error, and the connection
// is closed.
func (b *streamBody) Read([]byte) (int, error) { return 0, errStreamRead }

// SupportsBodyWriteTo tells fasthttp to write the body with WriteTo.
func (b *streamBody) SupportsBodyWriteTo() bool { return true }

// WriteTo runs the reply's Stream onto w, buffered, and logs how it ended.
func (b *streamBody) WriteTo(w io.Writer) (n int64, err error) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	stop := context.AfterFunc(b.s.streams, cancel)
	defer stop()
	pw := &progressWriter{w: w, conn: b.conn, timeout: b.timeout}
	bw := bufio.NewWriterSize(pw, streamBufSize)
	start := time.Now()
	err = func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("stream panicked: %v", v)
			}
		}()
		return b.write(ctx, bw)
	}()
	// What the stream wrote is sent even when it failed: its last words
	// (the export's ERROR.txt entry) are in the buffer, and when it failed
	// before its first chunk, this chunk is also what sends the status and
	// headers. When the connection is what failed, the buffer holds that
	// error and this sends nothing.
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	b.close()
	level, msg := slog.LevelInfo, "stream sent"
	attrs := []slog.Attr{slog.String("route", b.route), slog.String("request_id", b.reqID),
		slog.Int64("bytes_out", pw.n), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000)}
	if err != nil {
		level, msg = slog.LevelWarn, "stream ended early; the client got a truncated body"
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	b.s.log.LogAttrs(context.Background(), level, msg, attrs...)
	return pw.n, err
}

// Close releases what the reply held; fasthttp calls it whether the body
// was written or not.
func (b *streamBody) Close() error {
	b.close()
	return nil
}

func (b *streamBody) close() {
	b.once.Do(func() {
		if b.release != nil {
			b.release()
		}
	})
}

// progressWriter counts what reaches the connection and moves the
// connection's write deadline ahead before each write: WriteTimeout
// bounds one write, so a slow but reading client gets the whole body and
// one that stopped reading is cut off.
type progressWriter struct {
	w       io.Writer
	conn    net.Conn
	timeout time.Duration
	n       int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	if p.conn != nil && p.timeout > 0 {
		_ = p.conn.SetWriteDeadline(time.Now().Add(p.timeout))
	}
	n, err := p.w.Write(b)
	p.n += int64(n)
	return n, err
}

// replyStream hands rep.Stream to fasthttp; status and headers are set.
func (c *call) replyStream(rep Reply) {
	c.rc.Response.SetBodyStream(&streamBody{
		s: c.s, ctx: context.WithoutCancel(c.ctx), route: c.rt.pattern, reqID: c.reqID,
		write: rep.Stream, release: rep.Release, conn: c.rc.Conn(), timeout: c.s.o.WriteTimeout,
	}, -1)
}
