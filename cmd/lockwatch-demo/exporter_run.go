package main

import (
	"context"
	"errors"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
)

// exporterRun is cmd/internal/exporter serving in the background.
type exporterRun struct {
	listening chan []string
	done      chan error
	cancel    context.CancelFunc
	// finished is set once done has been received from.
	finished bool
}

// startExporter serves opts until stop is called. The exporter runs under its own context so
// that it keeps serving while the workload removes its keys.
func startExporter(opts exporter.Options) *exporterRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &exporterRun{listening: make(chan []string, 1), done: make(chan error, 1), cancel: cancel}
	opts.Listening = func(addrs []string) { r.listening <- addrs }
	go func() {
		err := exporter.Serve(ctx, opts)
		if err == nil && ctx.Err() == nil {
			err = errors.New("stopped serving")
		}
		r.done <- err
	}()
	return r
}

// waitListening returns the bound addresses, or why the exporter could not serve.
func (r *exporterRun) waitListening() ([]string, error) {
	select {
	case addrs := <-r.listening:
		return addrs, nil
	case err := <-r.done:
		r.finished = true
		return nil, err
	}
}

// stop shuts the exporter down and waits for it, unless it already stopped on its own.
func (r *exporterRun) stop() {
	r.cancel()
	if !r.finished {
		<-r.done
		r.finished = true
	}
}
