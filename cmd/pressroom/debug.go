package main

import (
	"context"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves net/http/pprof on addr until ctx ends, when
// PRESSROOM_DEBUG_ADDR is set: goroutine counts and heap profiles of a live
// `serve` or `worker` show a leak where only the process can (the soak
// benchmark samples them). It has its own mux and listener, so nothing of
// it is reachable through the API's port.
func serveDebug(ctx context.Context, env *environment) {
	addr := env.cfg.DebugAddr
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		env.log.Warn("debug listener not started", "addr", addr, "error", err)
		return
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	env.log.Info("debug listener", "addr", ln.Addr().String())
}
