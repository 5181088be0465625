// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// mthpctl-nri: an NRI plugin that attaches mthpctl policies to pod
// cgroups from a pod annotation; see man/mthpctl-nri.8.rst.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/containerd/nri/pkg/stub"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"
)

func parseConfig(b []byte, cfg *Config) error {
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// metricsHandler serves the plugin's collector alone (no Go runtime
// series: the figures are the pods').
func metricsHandler(p *Plugin, timeout time.Duration) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(p, timeout))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func main() {
	var (
		cfgFile  = flag.String("config", "", "YAML configuration file")
		name     = flag.String("name", "mthpctl", "plugin name registered with NRI")
		idx      = flag.String("idx", "50", "plugin index (its order among NRI plugins)")
		socket   = flag.String("nri-socket", "", "NRI socket (default: NRI's, /var/run/nri/nri.sock)")
		def      = flag.String("default", "", "node default spec for pods without the annotation (overrides the file)")
		metrics  = flag.String("metrics-address", "", "serve /metrics here (overrides the file; \"off\" turns it off)")
		mthpctl  = flag.String("mthpctl", "", "path of the mthpctl binary (overrides the file)")
		cgroupFS = flag.String("cgroup-root", "", "cgroup2 mount (overrides the file)")
	)
	flag.Parse()
	logger := log.New(os.Stderr, "mthpctl-nri: ", log.LstdFlags|log.LUTC)

	cfg := defaultConfig()
	if *cfgFile != "" {
		b, err := os.ReadFile(*cfgFile)
		if err != nil {
			logger.Fatal(err)
		}
		if err := parseConfig(b, &cfg); err != nil {
			logger.Fatalf("%s: %v", *cfgFile, err)
		}
	}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "default":
			cfg.Default = *def
		case "metrics-address":
			cfg.MetricsAddress = *metrics
		case "mthpctl":
			cfg.Mthpctl = *mthpctl
		case "cgroup-root":
			cfg.CgroupRoot = *cgroupFS
		}
	})
	if cfg.MetricsAddress == "off" {
		cfg.MetricsAddress = ""
	}
	timeout := time.Duration(cfg.TimeoutMs) * time.Millisecond
	backend := &ExecBackend{Path: cfg.Mthpctl, Timeout: timeout}
	p, err := NewPlugin(cfg, backend, logger)
	if err != nil {
		logger.Fatal(err)
	}

	opts := []stub.Option{stub.WithPluginName(*name), stub.WithPluginIdx(*idx)}
	if *socket != "" {
		opts = append(opts, stub.WithSocketPath(*socket))
	}

	if cfg.MetricsAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metricsHandler(p, 2*timeout))
		srv := &http.Server{Addr: cfg.MetricsAddress, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Fatalf("metrics: %v", err)
			}
		}()
	}
	runConnected(context.Background(), p, opts, logger)
}

// runConnected keeps the plugin connected to the runtime: when the runtime
// closes the connection (a restart of containerd, a request that timed
// out) or is not there yet, a new connection is made, after a pause that
// grows to reconnectMax; each connection starts with a Synchronize that
// reconciles. The pods' policies stay attached meanwhile.
func runConnected(ctx context.Context, p *Plugin, opts []stub.Option, logger *log.Logger) {
	pause := reconnectMin
	for ctx.Err() == nil {
		s, err := stub.New(p, opts...)
		if err != nil {
			logger.Fatal(err)
		}
		start := time.Now()
		err = s.Run(ctx)
		p.setConnected(false)
		if time.Since(start) > reconnectMax {
			pause = reconnectMin
		}
		logger.Printf("not connected to the runtime (%v); connecting again in %v", err, pause)
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, reconnectMax)
	}
}

var reconnectMin, reconnectMax = 500 * time.Millisecond, 10 * time.Second
