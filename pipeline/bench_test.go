package pipeline

import (
	"context"
	"facturad/hacienda/registry"
	"facturad/signer/benchcpu"
	"facturad/signer/certmint"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkSend measures send calls through the whole pipeline (decode,
// validate and calculate, number, build, sign, store, submit, store again)
// against the sandbox on a loopback port with no added latency, with
// 8×GOMAXPROCS concurrent callers of one branch. The limiter is off: the
// figure is the pipeline's, not the pace chosen for the tax authority. It
// reports the process's CPU time per send (the sandbox's included: it
// judges and signs an answer for each) against one raw RSA-2048 signature
// measured right after (x-raw-rsa), which a busy machine does not skew as
// it does sends/s.
//
//	go test -run '^$' -bench BenchmarkSend -benchtime 2000x ./pipeline/
func BenchmarkSend(b *testing.B) {
	for _, k := range storeKinds {
		b.Run(k.name, func(b *testing.B) {
			benchSend(b, setupOptions{store: k.open})
		})
	}
}

// BenchmarkSendRegistry is a send with the registry checks off and on
// (refuse), the cache warm: what the checks cost a send. Compare the two
// x-raw-rsa figures of one run (docs/performance.md).
func BenchmarkSendRegistry(b *testing.B) {
	for _, pol := range []registry.Policy{registry.PolicyOff, registry.PolicyRefuse} {
		b.Run(string(pol), func(b *testing.B) {
			benchSend(b, setupOptions{registry: pol})
		})
	}
}

// benchSend sends FEs in parallel and reports the process's CPU a send,
// also against one raw RSA signature. The first send, before the timer,
// warms the caches.
func benchSend(b *testing.B, so setupOptions) {
	so.pipeline = func(o *Options) {
		o.Limiter = NewTokenBucket(0, 0)
		o.QueueSize = 1024
	}
	bn := setup(b, so)
	if _, err := bn.sendRaw(context.Background(), bn.branch, body(b, request("01", "warm"))); err != nil {
		b.Fatal(err)
	}
	req := request("01", "")
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	cpu0 := benchcpu.ProcessCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := make(map[string]any, len(req))
			for k, v := range req {
				r[k] = v
			}
			r["id_externo"] = "bench-" + strconv.FormatInt(seq.Add(1), 10)
			out, err := bn.sendRaw(context.Background(), bn.branch, body(b, r))
			if err != nil || out.Failed {
				b.Errorf("send: %v %s", err, describe(out))
				return
			}
		}
	})
	b.StopTimer()
	cpu := benchcpu.ProcessCPU(b) - cpu0
	rsa := benchcpu.RawRSA(b, certmint.TestKey(1), 200)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/send")
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(rsa), "x-raw-rsa")
}
