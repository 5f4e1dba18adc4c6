// The mixed workload on Go's scheduler, the anchor beside brigade and tokio
// in scripts/cpu_limit_bench.sh.
//
//	go_anchor serve ADDR_FILE BG UNIT_US SECS
//	    An echo server (one byte in, one byte out) on 127.0.0.1, its address
//	    written to ADDR_FILE; BG goroutines doing UNIT_US µs units of CPU
//	    work, runtime.Gosched() after each. Every second, for SECS seconds,
//	    it prints "background_cpus X": the background's work in CPUs so far
//	    (units done × the calibrated unit time over the time run).
//	go_anchor client ADDR SECS
//	    Sends a byte every millisecond (open loop) and prints "p50_ms X" and
//	    "p99_ms X" of the round trips, latency counted from when each send
//	    was due.
//
// GOMAXPROCS is Go's own (Go >= 1.25 sizes it from the cgroup's CPU quota).
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		if len(os.Args) != 6 {
			usage()
		}
		serve(os.Args[2], atoi(os.Args[3]), atoi(os.Args[4]), atoi(os.Args[5]))
	case "client":
		if len(os.Args) != 4 {
			usage()
		}
		client(os.Args[2], atoi(os.Args[3]))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go_anchor serve ADDR_FILE BG UNIT_US SECS | client ADDR SECS")
	os.Exit(2)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "not a positive number: %q\n", s)
		os.Exit(2)
	}
	return n
}

var sink uint64

// spin does n iterations of a cheap hash: the unit of CPU work.
func spin(n int) {
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	atomic.AddUint64(&sink, x&1)
}

// threadCPU is the calling OS thread's CPU time (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(1, &usage); err != nil { // 1: RUSAGE_THREAD
		panic(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// calibrate returns how many spin iterations take unitUs microseconds of
// CPU: measured on the thread's CPU clock, so that a quota throttling the
// process meanwhile does not make units look longer than they are.
func calibrate(unitUs int) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 1 << 16
	for {
		start := threadCPU()
		spin(n)
		took := threadCPU() - start
		if took > 50*time.Millisecond {
			return int(float64(n) * float64(unitUs) * 1000 / float64(took.Nanoseconds()))
		}
		n *= 2
	}
}

func serve(addrFile string, bg, unitUs, secs int) {
	iterations := calibrate(unitUs)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(addrFile, []byte(listener.Addr().String()), 0o644); err != nil {
		panic(err)
	}
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				buf := make([]byte, 1)
				for {
					if _, err := conn.Read(buf); err != nil {
						return
					}
					if _, err := conn.Write(buf); err != nil {
						return
					}
				}
			}(conn)
		}
	}()
	var units uint64
	var stop atomic.Bool
	for i := 0; i < bg; i++ {
		go func() {
			for !stop.Load() {
				spin(iterations)
				atomic.AddUint64(&units, 1)
				runtime.Gosched()
			}
		}()
	}
	fmt.Printf("gomaxprocs %d\n", runtime.GOMAXPROCS(0))
	// A line a second, so that the caller may stop the server at any time
	// and read the last one.
	start := time.Now()
	for i := 0; i < secs; i++ {
		time.Sleep(time.Second)
		done := atomic.LoadUint64(&units)
		elapsed := time.Since(start).Seconds()
		fmt.Printf("background_cpus %.3f\n", float64(done)*float64(unitUs)/1e6/elapsed)
	}
	stop.Store(true)
}

func client(addr string, secs int) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	buf := []byte{1}
	var latencies []time.Duration
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * time.Millisecond)
		if due.Sub(start) >= time.Duration(secs)*time.Second {
			break
		}
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := conn.Write(buf); err != nil {
			panic(err)
		}
		if _, err := conn.Read(buf); err != nil {
			panic(err)
		}
		latencies = append(latencies, time.Since(due))
	}
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	fmt.Printf("p50_ms %.3f\np99_ms %.3f\n", at(0.5), at(0.99))
}
