package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/gopi-dev/gopi/core/checkpoint"
	"github.com/gopi-dev/gopi/core/tools"
)

// shutdownOnSignal is pi 1.5's rule for SIGTERM and SIGHUP (and, in gopi,
// Ctrl-C): the first one cancels the returned context, which starts an
// orderly shutdown (the run aborted, the session flushed, the commands'
// process groups ended); nothing else interrupts that, a stdin EOF
// included. A second signal, while it runs, ends gopi at once with status
// 128+signal, as pi exits then, after a SIGKILL to every process group its
// commands started, so that none outlives it, and with no temporary
// snapshot index left behind. stop ends the watch; a
// signal after it has its default effect.
func shutdownOnSignal(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, len(sigs)+1)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		seen := 0
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				seen++
				if seen == 1 {
					cancel()
					continue
				}
				tools.StopStarted(0)
				checkpoint.RemoveTemporaryIndexes()
				code := 1
				if s, ok := sig.(syscall.Signal); ok {
					code = 128 + int(s)
				}
				os.Exit(code)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
		cancel()
	}
}
