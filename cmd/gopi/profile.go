package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes Go profiles when GOPI_CPUPROFILE or GOPI_MEMPROFILE
// name files: how the figures in docs/performance.md are explained. The
// returned func ends them; it is called as gopi exits.
func startProfiles(stderr io.Writer) (stop func()) {
	cpuPath, memPath := os.Getenv("GOPI_CPUPROFILE"), os.Getenv("GOPI_MEMPROFILE")
	if cpuPath == "" && memPath == "" {
		return func() {}
	}
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		// 2 kHz rather than pprof's 100 Hz: a reply streams in well
		// under a second. pprof then warns that the rate is already set.
		runtime.SetCPUProfileRate(2000)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "gopi: GOPI_CPUPROFILE:", err)
		} else {
			cpu = f
		}
	}
	if memPath != "" {
		runtime.MemProfileRate = 4096
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			_ = cpu.Close()
		}
		if memPath == "" {
			return
		}
		f, err := os.Create(memPath)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
		if err != nil {
			fmt.Fprintln(stderr, "gopi: GOPI_MEMPROFILE:", err)
		}
	}
}
